import { host } from './fake-host.js';

// u64 in and out, as the bindings give them.
export const now = () => host.clock;
export const sleep = (millis) => {
  host.clock += BigInt(millis);
};
