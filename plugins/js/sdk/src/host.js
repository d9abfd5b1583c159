/**
 * The host's capabilities, wrapped so that every failed call is one {@link HostCallError}
 * naming the call.
 *
 * Plugins call these rather than the raw imports. A failed call throws a `HostCallError`,
 * which keeps the host's kind of "no" for a caller that decides on it and, being a
 * {@link Refusal}, refuses with `call-denied`, `call-failed`, `call-timed-out` or
 * `call-unavailable` and reads `failed to <call>: <kind>: <the host's text>` when it is left
 * to end `check` or `adopt`.
 *
 * @module
 */

import { clock, control, log, machine } from './bindings.js';
import { Refusal } from './refusal.js';

/** The host's kinds of "no", as the WIT `host-error` variant tags them. */
export const ErrorKind = Object.freeze({ Denied: 'denied', Failed: 'failed', TimedOut: 'timed-out', Unavailable: 'unavailable' });

const KIND_WORDS = { denied: 'denied', failed: 'the mesh said no', 'timed-out': 'timed out', unavailable: 'unavailable' };

/** A WIT `host-error` in words, its kind first: `denied: …`, `the mesh said no: …`, `timed out: …`, `unavailable: …`. */
export function describe(error) {
  const words = KIND_WORDS[error.tag];
  if (words === undefined) throw new TypeError(`not a host error: ${JSON.stringify(error)}`);
  return `${words}: ${error.val}`;
}

/**
 * A host call that did not do what the plugin asked: `call` as a refusal names it (``tell `push
 * node-1` ``) and the WIT `host-error` the host gave. Its message is `failed to <call>: <reason>`
 * and its code `call-<kind>`.
 */
export class HostCallError extends Refusal {
  constructor(call, hostError) {
    super(`call-${hostError.tag}`, `failed to ${call}: ${describe(hostError)}`);
    this.name = 'HostCallError';
    this.call = call;
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

/** Calls an import, turning the `err` side of its result (thrown with the host-error as `payload`) into a HostCallError. */
function calling(call, f) {
  try {
    return f();
  } catch (e) {
    if (typeof e === 'object' && e !== null && Object.hasOwn(e, 'payload') && e.payload?.tag in KIND_WORDS) {
      throw new HostCallError(call(), e.payload);
    }
    throw e;
  }
}

/** How long an ordinary control-plane command may take before the host gives up on it. */
export const TELL_TIMEOUT_SECONDS = 60;

/** A WIT `command` as the control plane reads it (`push node-1`), for messages: the host says. */
export function words(command) {
  return control.words(command);
}

/** How many characters of a command a refusal quotes before cutting it (the Rust SDK's `quoted` cuts at as many). */
export const SHOWN = 200;

const encoder = new TextEncoder();

/** A command as a refusal quotes it: in full, or cut after 200 characters (with its length in bytes). */
export function quoted(command) {
  const text = words(command);
  const chars = Array.from(text);
  if (chars.length <= SHOWN) return text;
  return `${chars.slice(0, SHOWN).join('')} … (${encoder.encode(text).length} bytes)`;
}

/** Shows a line to the operator, prefixed by the host with the module's name. */
export function say(line) {
  log.say(String(line));
}

/** Milliseconds since the run began, on the host's clock (virtual in the simulator). */
export function nowMillis() {
  return Number(clock.now());
}

/** Waits on the host's clock, never past the call's deadline; a fraction is dropped. */
export function sleepMillis(millis) {
  clock.sleep(BigInt(Math.max(0, Math.trunc(millis))));
}

/** Tells one command (a WIT `command`: `{ tag: 'push', val: 'node-1' }`) with the ordinary timeout; returns its output. */
export function tell(command) {
  return tellWithin(command, TELL_TIMEOUT_SECONDS);
}

/** Tells one command, allowing it `timeoutSeconds` (the host may lower it, never raise it). */
export function tellWithin(command, timeoutSeconds) {
  return calling(() => `tell \`${quoted(command)}\``, () => control.tell(command, timeoutSeconds));
}

/** Carries bytes (a string as its UTF-8) into the control plane at `remote`; `name` labels it in the host's records. */
export function carryBytes(name, bytes, remote) {
  const val = typeof bytes === 'string' ? encoder.encode(bytes) : bytes;
  calling(() => `carry \`${name}\` to \`${remote}\``, () => control.carry(name, { tag: 'bytes', val }, remote));
}

/** Carries a secret (a handle from {@link credential}) into the control plane at `remote`. */
export function carrySecret(secret, remote) {
  const name = secret.name();
  calling(
    () => `carry secret \`${name}\` to \`${remote}\``,
    () => control.carry(name, { tag: 'secret', val: secret }, remote),
  );
}

/** A genesis credential by name: a handle the plugin can carry but never read. */
export function credential(name) {
  return calling(() => `get credential \`${name}\``, () => control.credential(name));
}

/** What a container runs, `undefined` when there is none; only containers granted in `adopt.grants.inspect`. */
export function inspect(container) {
  return calling(() => `inspect container \`${container}\``, () => machine.inspect(container)) ?? undefined;
}

/**
 * An HTTP GET of a URL granted in `adopt.grants.fetch`. A probe that cannot connect has an
 * answer, not a reason to stop: catch the HostCallError and look at its `kind`.
 */
export function fetch(url) {
  return calling(() => `fetch \`${url}\``, () => machine.fetch(url));
}

// The engine's own `fetch` global has no network under it (the build leaves StarlingMonkey's
// `http` out): a plugin that reaches for it by mistake is told where the network is.
globalThis.fetch = () => {
  throw new TypeError("the global `fetch` reaches no network in a plugin: use `fetch` from '@mesh-adopt/sdk'");
};
