/**
 * The `mesh:adopt` imports, gathered in one module.
 *
 * Every other module of the SDK reaches the host through here, so there is exactly one place
 * where the component's imports are named: componentize-js wires these specifiers to the
 * world's imports when the plugin is built, and the SDK's tests map them to a fake host.
 * Named imports (not `import * as`) so the toolchain sees each function the plugin uses.
 *
 * @module
 */

import { carry, credential, tell } from 'mesh:adopt/control@0.1.0';
import { fetch, inspect } from 'mesh:adopt/machine@0.1.0';
import { say } from 'mesh:adopt/log@0.1.0';
import { now, sleep } from 'mesh:adopt/clock@0.1.0';

/** `mesh:adopt/control`: the only way a plugin changes the mesh. */
export const control = { carry, credential, tell };
/** `mesh:adopt/machine`: the node, read-only. */
export const machine = { fetch, inspect };
/** `mesh:adopt/log`: lines the operator reads as they happen. */
export const log = { say };
/** `mesh:adopt/clock`: the host's clock, virtual in the simulator. */
export const clock = { now, sleep };
