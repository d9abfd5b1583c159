import { call, Secret } from './fake-host.js';

export const credential = (name) => call('credential', name) ?? new Secret(name);
export const carry = (name, payload, remote) => {
  call('carry', name, payload, remote);
};
// The command is recorded as the WIT variant the plugin gave.
export const tell = (command, timeoutSeconds) => call('tell', command, timeoutSeconds) ?? '';
// How the host reads a command, as the fake host answers `words` (the real one is the host's).
export const words = ({ tag, val: v }) =>
  ({
    'module-add': () => `module add ${v}`,
    build: () => `build ${v.repository} --path modules/${v.module} --ref ${v.ref} --wait 1200s`,
    'module-issue': () => `module issue ${v.module} --node ${v.node}`,
    'secret-accept': () => `secret accept ${v.node} ${v.module} ${v.secret} --from ${v.source}`,
    push: () => `push ${v}`,
  })[tag]?.() ?? `${tag} ${v.node} ${v.module}`;
