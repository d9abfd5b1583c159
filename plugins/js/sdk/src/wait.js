/**
 * Bounded waits on the host's clock, for what a push sets going on the node.
 *
 * The clock is the host's (virtual in the simulator, so a two-minute wait costs a test
 * nothing), the condition is always asked at least once, and the wait never outlives its
 * bound by more than one poll: a plugin that waits on its own loop easily gets one of those
 * wrong.
 *
 * @module
 */

import { ErrorKind, HostCallError, inspect, nowMillis, sleepMillis } from './host.js';
import { Refusal } from './refusal.js';

/** A duration as a refusal says it: whole seconds as `120s`, anything else in milliseconds. */
export function seconds(millis) {
  return millis % 1000 === 0 ? `${millis / 1000}s` : `${Math.trunc(millis)}ms`;
}

/**
 * A wait whose bound passed before its condition held. Left uncaught it refuses
 * (`wait-timed-out`) with `gave up waiting for <what> after <bound>[: <seen>]`; a caller that
 * words its own timeout catches it.
 */
export class WaitTimedOut extends Refusal {
  /** `seen` is what was seen last, in words, when the waiting helper knows. */
  constructor(what, timeoutMillis, seen = '') {
    super('wait-timed-out', `gave up waiting for ${what} after ${seconds(timeoutMillis)}${seen === '' ? '' : `: ${seen}`}`);
    this.name = 'WaitTimedOut';
    this.what = what;
    this.timeoutMillis = timeoutMillis;
    this.seen = seen;
  }
}

/**
 * Asks `condition` until it gives something other than `undefined` or `null`, sleeping
 * `pollMillis` on the host's clock between asks, for at most `timeoutMillis`; throws a
 * {@link WaitTimedOut} naming `what` ("container `mesh-bus` to run …") otherwise. A refusal
 * the condition throws stops the wait and is thrown as it is.
 *
 * @template T
 * @param {() => T | undefined | null} condition
 * @returns {T}
 */
export function waitUntil(what, timeoutMillis, pollMillis, condition) {
  const deadline = nowMillis() + Math.trunc(timeoutMillis);
  for (;;) {
    const done = condition();
    if (done !== undefined && done !== null) return done;
    if (nowMillis() >= deadline) throw new WaitTimedOut(what, timeoutMillis);
    sleepMillis(pollMillis);
  }
}

/**
 * What a container is, as a wait asks: `undefined` when it is not there or the node cannot
 * say right now. Only a denied inspect is thrown: waiting on would end in a misleading "gone".
 */
export function containerState(container) {
  try {
    return inspect(container);
  } catch (e) {
    if (e instanceof HostCallError && e.kind !== ErrorKind.Denied) return undefined;
    throw e;
  }
}

/**
 * Waits, as {@link waitUntil} does, until `container` is up on `image`; the
 * {@link WaitTimedOut} says what it ran last. The container must be granted in
 * `adopt.grants.inspect` ({@link Reads} checks that in `check`).
 */
export function waitForImage(container, image, timeoutMillis, pollMillis) {
  let seen = '';
  try {
    return waitUntil(`container \`${container}\` to run \`${image}\``, timeoutMillis, pollMillis, () => {
      const state = containerState(container);
      if (state === undefined) seen = 'it is not there, or the node cannot say';
      else if (state.running) seen = `it runs \`${state.image}\``;
      else seen = `it is stopped, on \`${state.image}\``;
      return state !== undefined && state.running && state.image === image ? state : undefined;
    });
  } catch (e) {
    if (e instanceof WaitTimedOut) throw new WaitTimedOut(e.what, e.timeoutMillis, seen);
    throw e;
  }
}
