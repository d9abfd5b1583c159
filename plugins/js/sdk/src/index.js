/**
 * The guest side of mesh-adopt in JavaScript: what a catalogue module's `adopt.wasm` is
 * written with, the twin of the Rust `mesh-adopt-sdk` (contract `mesh:adopt@0.2.0`).
 *
 * A plugin is an object with `check(ctx)` and `adopt(ctx)`, registered with
 * {@link exportPlugin}. The host's capabilities are wrapped (`tell`, `carryBytes`, `inspect`,
 * …) so a failed call throws a refusal naming the call; {@link Provider} is the register →
 * build → issue → assign → prepare → push sequence every provider module shares; the host
 * hands the manifest over parsed (`ctx.manifest`). {@link Handover}, {@link waitUntil},
 * {@link Reads} and {@link adoptInPlace} are the steps several modules share. Messages and
 * refusal codes are the Rust SDK's.
 *
 * @module
 */

export { exportPlugin, WIT_PACKAGE, WORLD } from './plugin.js';
export { Refusal, refuse } from './refusal.js';
export {
  BUILD_WAIT,
  ErrorKind,
  HostCallError,
  TELL_TIMEOUT_SECONDS,
  carryBytes,
  carrySecret,
  credential,
  describe,
  fetch,
  inspect,
  nowMillis,
  quoted,
  say,
  sleepMillis,
  tell,
  tellWithin,
  words,
} from './host.js';
export { BUILD_TIMEOUT_SECONDS, DEFAULT_REF, Provider, acceptCommand } from './provider.js';
export { Handover } from './handover.js';
export { WaitTimedOut, containerState, seconds, waitForImage, waitUntil } from './wait.js';
export { adoptInPlace, container, filePath, identity, kind, mounts } from './foundation.js';
export { Reads } from './grants.js';
