// world mesh:adopt/adopter@0.1.0
export type Context = import('./interfaces/mesh-adopt-types.js').Context;
export type Plan = import('./interfaces/mesh-adopt-types.js').Plan;
export type Report = import('./interfaces/mesh-adopt-types.js').Report;
export type Refusal = import('./interfaces/mesh-adopt-types.js').Refusal;
export type * as MeshAdoptClock010 from './interfaces/mesh-adopt-clock.js'; // import mesh:adopt/clock@0.1.0
export type * as MeshAdoptControl010 from './interfaces/mesh-adopt-control.js'; // import mesh:adopt/control@0.1.0
export type * as MeshAdoptLog010 from './interfaces/mesh-adopt-log.js'; // import mesh:adopt/log@0.1.0
export type * as MeshAdoptMachine010 from './interfaces/mesh-adopt-machine.js'; // import mesh:adopt/machine@0.1.0
export type * as MeshAdoptTypes010 from './interfaces/mesh-adopt-types.js'; // import mesh:adopt/types@0.1.0
/**
* Decides, without changing anything, whether the module can be adopted, and how. The
* host denies every effect during this call.
*/
export function check(ctx: Context): Plan;
/**
* Adopts the module.
*/
export function adopt(ctx: Context): Report;
