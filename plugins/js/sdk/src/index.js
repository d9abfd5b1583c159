/**
 * The guest side of mesh-adopt in JavaScript: what a catalogue module's `adopt.wasm` is
 * written with, the twin of the Rust `mesh-adopt-sdk`.
 *
 * A plugin is an object with `check(ctx)` and `adopt(ctx)`, registered with
 * {@link exportPlugin}. The host's capabilities are wrapped (`tell`, `carryBytes`, `inspect`,
 * …) so a failed call throws a refusal naming the call; {@link Provider} is the register →
 * build → issue → assign → prepare → push sequence every provider module shares;
 * {@link readManifest} and the foundation helpers read the two documents a plugin decides
 * from; {@link Handover}, {@link waitUntil} and {@link Reads} are the steps several modules
 * share, made so that `check` and `adopt` come from one value and `check` refuses whatever
 * `adopt` would stumble on. Messages are word for word the Rust SDK's.
 *
 * @module
 */

export { exportPlugin, WIT_PACKAGE, WORLD } from './plugin.js';
export { Refusal, refuse } from './refusal.js';
export {
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
} from './host.js';
export {
  BUILD_TIMEOUT_SECONDS,
  BUILD_WAIT,
  Command,
  DEFAULT_REF,
  acceptingRemote,
  checkWord,
  manifestRemote,
} from './command.js';
export { Provider, acceptCommand } from './provider.js';
export { Handover } from './handover.js';
export { WaitTimedOut, containerState, seconds, waitForImage, waitUntil } from './wait.js';
export { adoptInPlace, container, filePath, identity, kind } from './foundation.js';
export { Grants, Manifest, PLUGIN_FILE, ParseError, mounts, readManifest } from './manifest.js';
export { withinGrant } from './urls.js';
export { Reads } from './grants.js';
