import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { Handover, words } from '../src/index.js';

beforeEach(() => host.reset());

const ctx = (secrets) => ({
  module: 'postgres',
  manifest: { secrets },
  foundation: [],
  options: { node: 'node-1', waitSeconds: 120 },
});
const superuser = (c) => new Handover(c, 'superuser', 'store-superuser', "the store's superuser");

test('the plan and the step name one accept', () => {
  const handover = superuser(ctx(['superuser']));
  assert.equal(words(handover.command()), 'secret accept node-1 postgres superuser --from /accepting-superuser');
  assert.equal(handover.summary(), 'carry genesis credential `store-superuser` in as secret `superuser` before the push');
  handover.deliver();
  assert.deepEqual(host.calls.map(([name]) => name), ['credential', 'carry', 'tell']);
  assert.equal(host.calls[1][3], '/accepting-superuser');
  assert.equal(host.calls[1][2].tag, 'secret');
  assert.deepEqual(host.said, ["accepted superuser: the store's superuser, as genesis made it"]);
});

test('a secret the manifest does not declare is refused before the credential is asked for', () => {
  for (const [secrets, declared] of [[[], 'none'], [['a', 'b'], '`a`, `b`']]) {
    assert.throws(() => superuser(ctx(secrets)).check(), {
      code: 'secret-not-declared',
      message:
        `the \`postgres\` module's manifest declares no secret \`superuser\` (it declares ${declared}), so ` +
        'the node would not accept the store\'s superuser as one of its secrets: add "superuser" to ' +
        '`secrets` in its manifest.json. Nothing has been registered',
    });
  }
  assert.deepEqual(host.calls, []);
});

test('a credential the host cannot hand over is refused in its words', () => {
  host.reset(() => ({ hostError: { tag: 'unavailable', val: 'no credential `store-superuser`' } }));
  const message =
    "the store's superuser (genesis credential `store-superuser`) cannot be had (unavailable: no credential " +
    '`store-superuser`), so the `postgres` module would have nothing to open its server with, and the mesh ' +
    'cannot make up the one the server already has';
  assert.throws(() => superuser(ctx(['superuser'])).check(), { message });
  assert.throws(() => superuser(ctx(['superuser'])).deliver(), { message });
});
