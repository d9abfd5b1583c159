/**
 * The guest side of mesh-adopt in JavaScript (contract `mesh:adopt@0.2.0`), the twin of the
 * Rust `mesh-adopt-sdk`: a plugin is an object with `check(ctx)` and `adopt(ctx)`, registered
 * with {@link exportPlugin}; the host's capabilities are wrapped so a failed call refuses
 * naming the call; {@link Provider}, {@link Handover}, {@link waitUntil}, {@link Reads} and
 * {@link adoptInPlace} are the steps modules share. Messages and refusal codes are the Rust SDK's.
 *
 * @module
 */

export { exportPlugin, WIT_PACKAGE, WORLD } from './plugin.js';
export { Refusal, refuse } from './refusal.js';
export {
  ErrorKind, HostCallError, TELL_TIMEOUT_SECONDS, carryBytes, carrySecret, credential, describe, fetch,
  inspect, nowMillis, quoted, say, sleepMillis, tell, tellWithin, words,
} from './host.js';
export { BUILD_TIMEOUT_SECONDS, DEFAULT_REF, Provider, acceptCommand } from './provider.js';
export { Handover } from './handover.js';
export { WaitTimedOut, containerState, seconds, waitForImage, waitUntil } from './wait.js';
export { adoptInPlace, container, filePath, identity, kind, mounts } from './foundation.js';
export { Reads } from './grants.js';
