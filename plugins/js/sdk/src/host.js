/**
 * The host's capabilities, wrapped so that every failed call is one {@link HostCallError}
 * naming the call.
 *
 * Plugins call these rather than the raw imports. A failed call throws a `HostCallError`,
 * which keeps the host's kind of "no" for a caller that decides on it and, being a
 * {@link Refusal}, reads `failed to <call>: <kind>: <the host's text>` when it is left to end
 * `check` or `adopt`: quoting the call the way an operator would type it.
 *
 * @module
 */

import { clock, control, log, machine } from './bindings.js';
import { Refusal } from './refusal.js';

/**
 * The host's kinds of "no", as the WIT `host-error` variant tags them, for a caller that treats
 * some as an answer (a health probe that cannot connect) and others as a reason to stop.
 */
export const ErrorKind = Object.freeze({
  /** The host's grants do not allow the call. */
  Denied: 'denied',
  /** The mesh was asked and said no. */
  Failed: 'failed',
  /** No answer came within the call's timeout. */
  TimedOut: 'timed-out',
  /** What was asked for is not there to be asked. */
  Unavailable: 'unavailable',
});

const KIND_WORDS = {
  [ErrorKind.Denied]: 'denied',
  [ErrorKind.Failed]: 'the mesh said no',
  [ErrorKind.TimedOut]: 'timed out',
  [ErrorKind.Unavailable]: 'unavailable',
};

/**
 * A host error in words, its kind first (`denied: …`, `the mesh said no: …`, `timed out: …`,
 * `unavailable: …`): what {@link HostCallError#reason} says, for a message that names the call
 * its own way.
 *
 * @param {{tag: string, val: string}} error a WIT `host-error`
 * @returns {string}
 */
export function describe(error) {
  const words = KIND_WORDS[error.tag];
  if (words === undefined) throw new TypeError(`not a host error: ${JSON.stringify(error)}`);
  return `${words}: ${error.val}`;
}

/**
 * A host call that did not do what the plugin asked: which call it was and what the host
 * answered. Its message is `failed to <call>: <reason>`, so, left uncaught, it refuses with
 * the words the operator needs.
 */
export class HostCallError extends Refusal {
  /**
   * @param {string} call the call as a refusal names it, e.g. ``tell `push node-1` ``
   * @param {{tag: string, val: string}} hostError the WIT `host-error` the host gave
   */
  constructor(call, hostError) {
    super(`failed to ${call}: ${describe(hostError)}`);
    this.name = 'HostCallError';
    /** The call as a refusal names it. */
    this.call = call;
    /** The error exactly as the host gave it. */
    this.hostError = hostError;
  }

  /** The host's kind of "no": one of {@link ErrorKind}. */
  get kind() {
    return this.hostError.tag;
  }

  /** The host's answer in words, its kind first, without the call. */
  get reason() {
    return describe(this.hostError);
  }
}

/**
 * Calls an import, turning the `err` side of its result (thrown by the bindings with the
 * host-error as `payload`) into a HostCallError naming `call`. Anything else thrown is a
 * fault in the plugin or the toolchain, and stays what it is.
 */
function calling(call, f) {
  try {
    return f();
  } catch (e) {
    if (e !== null && typeof e === 'object' && Object.prototype.hasOwnProperty.call(e, 'payload')) {
      const payload = e.payload;
      if (payload !== null && typeof payload === 'object' && payload.tag in KIND_WORDS) {
        throw new HostCallError(call(), payload);
      }
    }
    throw e;
  }
}

/** How long an ordinary control-plane command may take before the host gives up on it. */
export const TELL_TIMEOUT_SECONDS = 60;

/** How many characters of a command a refusal quotes before it cuts the rest. */
const SHOWN = 200;
const encoder = new TextEncoder();

/**
 * A command as a refusal quotes it: in full when short, cut after 200 characters (with its
 * length in bytes) when a plugin built it huge, so a refusal stays readable.
 *
 * @param {readonly string[]} args
 * @returns {string}
 */
export function quoted(args) {
  const command = args.join(' ');
  const chars = Array.from(command);
  if (chars.length <= SHOWN) return command;
  return `${chars.slice(0, SHOWN).join('')} … (${encoder.encode(command).length} bytes)`;
}

/**
 * Shows a line to the operator, prefixed by the host with the module's name.
 *
 * @param {string} line
 */
export function say(line) {
  log.say(String(line));
}

/**
 * Milliseconds since the run began, on the host's clock (virtual in the simulator). A number:
 * a run is far shorter than the 2^53 ms a number holds exactly.
 *
 * @returns {number}
 */
export function nowMillis() {
  return Number(clock.now());
}

/**
 * Waits on the host's clock, never past the call's deadline.
 *
 * @param {number} millis whole milliseconds (a fraction is dropped)
 */
export function sleepMillis(millis) {
  clock.sleep(BigInt(Math.max(0, Math.trunc(millis))));
}

/**
 * Tells the control plane one command with the ordinary timeout and returns its output.
 *
 * @param {readonly string[]} args
 * @returns {string}
 */
export function tell(args) {
  return tellWithin(args, TELL_TIMEOUT_SECONDS);
}

/**
 * Tells the control plane one command, allowing it `timeoutSeconds` (the host may lower it,
 * never raise it), and returns its output.
 *
 * @param {readonly string[]} args
 * @param {number} timeoutSeconds
 * @returns {string}
 */
export function tellWithin(args, timeoutSeconds) {
  const words = Array.from(args, String);
  return calling(() => `tell \`${quoted(words)}\``, () => control.tell(words, timeoutSeconds));
}

/**
 * Carries bytes the plugin has into the control plane at `remote`, so a later `tell` can name
 * it; `name` labels it in the host's records.
 *
 * @param {string} name
 * @param {Uint8Array | string} bytes a string is carried as its UTF-8
 * @param {string} remote
 */
export function carryBytes(name, bytes, remote) {
  const val = typeof bytes === 'string' ? encoder.encode(bytes) : bytes;
  calling(() => `carry \`${name}\` to \`${remote}\``, () => control.carry(name, { tag: 'bytes', val }, remote));
}

/**
 * Carries a secret into the control plane at `remote`; the plugin never sees its bytes, and
 * the host records it by name only.
 *
 * @param {{name(): string}} secret a handle from {@link credential}
 * @param {string} remote
 */
export function carrySecret(secret, remote) {
  const name = secret.name();
  calling(
    () => `carry secret \`${name}\` to \`${remote}\``,
    () => control.carry(name, { tag: 'secret', val: secret }, remote),
  );
}

/**
 * Asks the host for a genesis credential by name: a handle the plugin can carry but never
 * read. It works in `check` as in `adopt`; a caller that can say what the missing credential
 * means for its module words the refusal from {@link HostCallError#reason}.
 *
 * @param {string} name
 * @returns {{name(): string}}
 */
export function credential(name) {
  return calling(() => `get credential \`${name}\``, () => control.credential(name));
}

/**
 * Asks the node what a container runs: `undefined` when there is no such container. A node
 * that cannot be asked right now (`failed`, `timed-out`) is often worth asking again. Only
 * containers the manifest grants in `adopt.grants.inspect` can be asked about; {@link Reads}
 * checks that in `check`.
 *
 * @param {string} container
 * @returns {{image: string, running: boolean} | undefined}
 */
export function inspect(container) {
  const state = calling(() => `inspect container \`${container}\``, () => machine.inspect(container));
  return state ?? undefined;
}

/**
 * An HTTP GET. A health probe that cannot connect has an answer, not a reason to stop: catch
 * the HostCallError and look at its `kind`. Only URLs the manifest grants in
 * `adopt.grants.fetch` can be fetched; {@link Reads} checks that in `check`.
 *
 * @param {string} url
 * @returns {{status: number, body: string}}
 */
export function fetch(url) {
  return calling(() => `fetch \`${url}\``, () => machine.fetch(url));
}
