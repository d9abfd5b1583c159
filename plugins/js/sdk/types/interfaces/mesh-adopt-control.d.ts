/** @module Interface mesh:adopt/control@0.2.0 **/
/**
 * Asks the host for a genesis credential by name; it is read from the host's
 * credentials directory and never leaves the host except through `carry`.
 */
export function credential(name: string): Secret;
/**
 * Puts a file into the control plane at `remote`, so a later `tell` can name it.
 * `name` is a label for records; secrets are recorded by name only.
 */
export function carry(name: string, payload: Payload, remote: string): void;
/**
 * Runs one control-plane command and returns its output. The host may lower
 * `timeout-seconds` but never raises it.
 */
export function tell(command: Command, timeoutSeconds: number): string;
export type HostError = import('./mesh-adopt-types.js').HostError;
export type Command = import('./mesh-adopt-types.js').Command;
/**
 * What to carry: bytes the plugin has, or a secret it holds a handle to.
 */
export type Payload = PayloadBytes | PayloadSecret;
export interface PayloadBytes {
  tag: 'bytes',
  val: Uint8Array,
}
export interface PayloadSecret {
  tag: 'secret',
  val: Secret,
}

export class Secret {
  /**
   * This type does not have a public constructor.
   */
  private constructor();
  /**
  * The credential's name, for messages.
  */
  name(): string;
}
