import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { acceptCommand, Provider, Refusal, words } from '../src/index.js';

beforeEach(() => host.reset());

const ctx = (catalogSource = { repository: 'https://git.mesh.test/catalogue.git' }) => ({
  module: 'postgres',
  manifestBytes: new TextEncoder().encode('{"name":"postgres"}'),
  foundation: [],
  options: { node: 'node-1', catalogSource, waitSeconds: 120 },
});

const SEQUENCE = [
  'module add /postgres-module.json',
  'build https://git.mesh.test/catalogue.git --path modules/postgres --ref main --wait 1200s',
  'module issue postgres --node node-1',
  'assign node-1 postgres',
  'prepare node-1 postgres',
  'push node-1',
];

test('the plan lists the sequence, the own step before the push', () => {
  const commands = new Provider(ctx()).commands([acceptCommand(ctx(), 'superuser')]);
  assert.deepEqual(commands.map(words), [
    ...SEQUENCE.slice(0, 5),
    'secret accept node-1 postgres superuser --from /accepting-superuser',
    'push node-1',
  ]);
  const v2 = new Provider(ctx({ repository: 'r', ref: 'v2' })).commands();
  assert.equal(words(v2[1]), 'build r --path modules/postgres --ref v2 --wait 1200s');
  // The commands are the WIT variant, as the host reads it.
  assert.deepEqual(v2[1], { tag: 'build', val: { repository: 'r', module: 'postgres', ref: 'v2' } });
  assert.deepEqual(v2[2], { tag: 'module-issue', val: { node: 'node-1', module: 'postgres' } });
  assert.deepEqual(v2.at(-1), { tag: 'push', val: 'node-1' });
});

test('install tells the plan, with the build allowed 1500s and the rest 60s', () => {
  const order = [];
  new Provider(ctx(), '(the provisioner)').install(() => order.push('own step'));
  assert.deepEqual(host.calls[0].slice(0, 2), ['carry', 'postgres-module.json']);
  assert.equal(host.calls[0][3], '/postgres-module.json');
  assert.equal(new TextDecoder().decode(host.calls[0][2].val), '{"name":"postgres"}');
  const tells = host.calls.filter(([name]) => name === 'tell');
  assert.deepEqual(tells.map(([, command]) => words(command)), SEQUENCE);
  assert.deepEqual(tells.map(([, , timeout]) => timeout), [60, 1500, 60, 60, 60, 60]);
  assert.deepEqual(order, ['own step']);
  assert.deepEqual(host.said, [
    'registered postgres',
    'building postgres (the provisioner)',
    'account issued for postgres',
    'prepared postgres on node-1',
    'pushed node-1',
  ]);
});

test('a module refused its account goes on', () => {
  host.reset((name, command) =>
    name === 'tell' && command.tag === 'module-issue' ? { hostError: { tag: 'failed', val: 'no subjects' } } : undefined,
  );
  new Provider(ctx()).install();
  assert.ok(host.said.includes('no account for postgres: it declares nothing to say on the bus'));
  assert.equal(host.said[1], 'building postgres');
  assert.equal(host.said.at(-1), 'pushed node-1');
});

test('a build that does not answer refuses naming it', () => {
  host.reset((name, command) =>
    name === 'tell' && command.tag === 'build' ? { hostError: { tag: 'timed-out', val: 'no answer within 1500s' } } : undefined,
  );
  assert.throws(() => new Provider(ctx()).install(), {
    code: 'call-timed-out',
    message:
      'failed to tell `build https://git.mesh.test/catalogue.git --path modules/postgres --ref main --wait 1200s`: timed out: no answer within 1500s',
  });
});

test('no catalogue source refuses before anything is carried', () => {
  const refusal = /^the `postgres` module must be built, and no catalogue source was given to build it from \(--catalog-source REPO\[@REF\]\): the catalogue checkout is only where its manifest is read; a builder clones the catalogue repository$/;
  assert.throws(() => new Provider(ctx(null)).commands(), (e) => e instanceof Refusal && e.code === 'no-catalogue-source' && refusal.test(e.message));
  assert.throws(() => new Provider(ctx(null)).install(), (e) => e instanceof Refusal && e.code === 'no-catalogue-source' && refusal.test(e.message));
  assert.deepEqual(host.calls, []);
});
