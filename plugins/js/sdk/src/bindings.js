/**
 * The `mesh:adopt` imports, gathered in one module: the one place the component's imports are
 * named. componentize-js wires these specifiers to the world's imports; the SDK's tests map
 * them to a fake host. Named imports, so the toolchain sees each function the plugin uses.
 *
 * @module
 */

import { carry, credential, tell, words } from 'mesh:adopt/control@0.2.0';
import { fetch, inspect, ungranted } from 'mesh:adopt/machine@0.2.0';
import { say } from 'mesh:adopt/log@0.2.0';
import { now, sleep } from 'mesh:adopt/clock@0.2.0';

export const control = { carry, credential, tell, words };
export const machine = { fetch, inspect, ungranted };
export const log = { say };
export const clock = { now, sleep };
