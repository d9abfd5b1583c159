import { call, Secret } from './fake-host.js';

export const credential = (name) => call('credential', name) ?? new Secret(name);
export const carry = (name, payload, remote) => {
  call('carry', name, payload, remote);
};
// The command is recorded as the WIT variant the plugin gave.
export const tell = (command, timeoutSeconds) => call('tell', command, timeoutSeconds) ?? '';
