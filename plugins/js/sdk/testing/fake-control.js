import { call, Secret } from './fake-host.js';

export const credential = (name) => call('credential', name) ?? new Secret(name);
export const carry = (name, payload, remote) => {
  call('carry', name, payload, remote);
};
export const tell = (args, timeoutSeconds) => call('tell', args.join(' '), timeoutSeconds) ?? '';
