/** @module Interface mesh:adopt/control@0.2.0 **/
/**
 * Asks the host for a genesis credential by name; it is read from the host's
 * credentials directory (the file of that name, less one trailing newline) and never
 * leaves the host except through `carry`. Not an effect: allowed in `init` and `check`,
 * so `check` can refuse a credential that cannot be had. Returns `denied` unless the
 * manifest's `adopt.grants.credentials` lists the name (preflight has already refused
 * a module whose granted credential is missing, empty or over 64 KiB), `unavailable`
 * when it cannot be read.
 */
export function credential(name: string): Secret;
/**
 * Puts a file into the control plane at `remote`, so a later `tell` can name it.
 * `name` is a label for records; secrets are recorded by name only. Returns `ok` once
 * the control plane holds it. `denied` during `init` and `check`; for a payload and
 * path other than `payload` allows; during `adopt`, for a path that no command of the
 * plan registers (`module-add`) or accepts from (`secret-accept`); and for a secret
 * handle the plugin no longer holds. `failed` when the control plane refused it,
 * `timed-out` past the host's bound (60 s), `unavailable` when it cannot be reached.
 */
export function carry(name: string, payload: Payload, remote: string): void;
/**
 * Runs one control-plane command and returns its output: what the control plane printed
 * on its standard output (a live control plane's cut at the host's output limit, 256 KiB
 * by default; the simulator's one line, `registered postgres`, `pushed node-1`), for
 * the plugin's messages; the provider sequence reads nothing of it.
 * 
 * The host waits at most `timeout-seconds`, lowered to its ceiling (30 minutes,
 * `limits.tell_timeout_ceiling`) and to what is left of the call's wall deadline; it
 * never raises it. The provider sequence asks 60 s, and 1500 s for `build`.
 * 
 * Returns `denied` during `init` and `check`; for a command beyond what a plugin may
 * tell (see `command`); during `adopt`, for any command but the plan's next (`` `tell
 * push node-1` is not the plan's next command: the plan `check` made says `tell prepare
 * node-1 postgres` next (command 5 of 7) ``, or beyond the plan's end), for a
 * `module-add` of a path this call carried no manifest to, and for a `secret-accept`
 * from a path this call carried no secret to; for names that hold a credential's value;
 * for more than 64 words or 64 KiB of them (`limits.tell_args_count`,
 * `limits.tell_args_bytes`). A command the grants let through counts as told, whatever
 * the mesh answers. `failed` is the control plane's no, its answer as the text (`module
 * issue` of a module with no bus subjects fails so, and is the one planned command
 * `adopt` may go past); `timed-out`: no answer in time, and the command was stopped;
 * `unavailable`: the control plane cannot be reached.
 */
export function tell(command: Command, timeoutSeconds: number): string;
/**
 * The command as the control plane reads it (`push node-1`: its words joined by single
 * spaces, as `command` spells each case), for a plugin's messages: so no plugin spells
 * the vocabulary itself. Asks nothing of the mesh and checks nothing; allowed anywhere.
 */
export function words(command: Command): string;
export type HostError = import('./mesh-adopt-types.js').HostError;
export type Command = import('./mesh-adopt-types.js').Command;
/**
 * What to carry: bytes the plugin has, or a secret it holds a handle to.
 */
export type Payload = PayloadBytes | PayloadSecret;
/**
 * Bytes: only the module's manifest, exactly `context.manifest-bytes`, to
 * `/<module>-module.json`.
 */
export interface PayloadBytes {
  tag: 'bytes',
  val: Uint8Array,
}
/**
 * A credential's value, which the plugin never sees: only to `/accepting-<secret>`
 * for a secret the manifest declares.
 */
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
