// world mesh:adopt/adopter@0.2.0
export type Context = import('./interfaces/mesh-adopt-types.js').Context;
export type Plan = import('./interfaces/mesh-adopt-types.js').Plan;
export type Report = import('./interfaces/mesh-adopt-types.js').Report;
export type Refusal = import('./interfaces/mesh-adopt-types.js').Refusal;
export type * as MeshAdoptClock020 from './interfaces/mesh-adopt-clock.js'; // import mesh:adopt/clock@0.2.0
export type * as MeshAdoptControl020 from './interfaces/mesh-adopt-control.js'; // import mesh:adopt/control@0.2.0
export type * as MeshAdoptLog020 from './interfaces/mesh-adopt-log.js'; // import mesh:adopt/log@0.2.0
export type * as MeshAdoptMachine020 from './interfaces/mesh-adopt-machine.js'; // import mesh:adopt/machine@0.2.0
export type * as MeshAdoptTypes020 from './interfaces/mesh-adopt-types.js'; // import mesh:adopt/types@0.2.0
/**
* Hands the plugin what it decides from, once per instance and before `check` or
* `adopt`: one value for both, so `adopt` works from exactly what `check` planned with.
* The host denies every effect during this call, and counts it as the `check` after it.
*/
export function init(ctx: Context): void;
/**
* Decides, without changing anything, whether the module can be adopted, and how. The
* host denies every effect during this call. A refusal makes the module refused (in
* preflight the run then stops before any effect); a plan is shown and, once every
* module has checked, binds `adopt`. A `check` that was denied a call and plans anyway
* has gone on past what it was told: its plan is not used, and the module is unusable.
*/
export function check(): Plan;
/**
* Adopts the module: tells exactly the plan `check` made, in order. A call the host
* denies, or a planned command that fails (other than `module issue`, which the provider
* sequence may go without), means the module is not adopted, whatever this returns: go on
* past one and the host reports the module refused, naming it (code
* `went-on-past-a-failure`). A report returned before every planned command was told
* makes the module incomplete, naming what was left.
*/
export function adopt(): Report;
