import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { adoptInPlace, exportPlugin, filePath, mounts, Reads, refuse, WIT_PACKAGE } from '../src/index.js';

const ctx = (image, name) => ({
  module: 'postgres',
  manifest: { name: 'postgres', containers: [{ id: 'server', name, image, volumes: [] }], secrets: [], busSubjects: [], busUsers: '', adopts: [], grants: { credentials: [], inspect: [], fetch: [] } },
  foundation: [
    { tag: 'container', val: { id: 'store', name: 'mesh-store', image: 'postgres:16', volumes: [] } },
    { tag: 'file', val: { id: 'bus-accounts', path: '/etc/bus/users' } },
    { tag: 'other', val: { id: 'net', kind: 'network' } },
  ],
  options: { node: 'node-1', waitSeconds: 120 },
});

test('adopting in place names both sides', () => {
  assert.equal(adoptInPlace(ctx('postgres:16', 'mesh-store'), 'store', 'store', 'x').name, 'mesh-store');
  assert.throws(() => adoptInPlace(ctx('postgres:17', 'mesh-store'), 'store', 'store', 'pin both'), {
    message:
      "the `postgres` module's container `mesh-store` is pinned to image `postgres:17`, but the foundation's store runs " +
      '`postgres:16`. Adopting in place needs the same image: pin both. Nothing has been registered',
    code: 'image-differs',
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'other'), 'store', 'store', 'x'), {
    message:
      "the `postgres` module declares no container named `mesh-store`, so nothing in it adopts the foundation's store; " +
      'its server container must carry the name genesis raised',
    code: 'container-not-declared',
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'mesh-store'), 'db', 'database', 'x'), {
    message:
      'the foundation bundle has no `db`, so there is no database for the `postgres` module to adopt; the bundle declares: store, bus-accounts, net',
    code: 'foundation-missing',
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'mesh-store'), 'net', 'store', 'x'), {
    message: "the foundation bundle's `net` is a network, not a container: the `postgres` module has no store to adopt",
    code: 'foundation-not-a-container',
  });
  assert.equal(filePath(ctx('', '').foundation, 'bus-accounts'), '/etc/bus/users');
  assert.equal(filePath(ctx('', '').foundation, 'store'), '');
});

test('volumes map each inside path to its host path', () => {
  const at = mounts(['/var/s:/data', '/etc/b:/etc/nats:ro', 'anonymous']);
  assert.equal(at.get('/data'), '/var/s');
  assert.equal(at.get('/etc/nats'), '/etc/b');
  assert.equal(at.size, 2);
});

test('reads the host says the grants would deny are refused in check', () => {
  const reads = new Reads().inspect('mesh-bus').fetch('http://127.0.0.1:8222/healthz');
  const lines = [
    'inspect container `mesh-bus`: add "mesh-bus" to `adopt.grants.inspect` in manifest.json',
    'fetch `http://127.0.0.1:8222/healthz`: add "http://127.0.0.1:8222/healthz" to `adopt.grants.fetch` in manifest.json',
  ];
  host.reset((name) => (name === 'ungranted' ? lines : undefined));
  assert.throws(() => reads.check({ module: 'nats' }), {
    code: 'not-granted',
    message:
      "the `nats` module's adopt step reads what its manifest does not grant, so the host would deny it mid-adoption:\n" +
      ` - ${lines[0]}\n - ${lines[1]}\nNothing has been registered`,
  });
  assert.deepEqual(host.calls, [['ungranted', ['mesh-bus'], ['http://127.0.0.1:8222/healthz']]]);
  host.reset();
  reads.check({ module: 'nats' });
});

test('the context given to init reaches check and adopt; refusals are the err side, bugs stay bugs', () => {
  const seen = [];
  const exported = exportPlugin({
    check: (ctx) => (seen.push(ctx), { summary: [], commands: [{ tag: 'push', val: 'node-1' }] }),
    adopt: () => {
      throw refuse('bus-gone', 'no');
    },
  });
  assert.deepEqual(exported.check(), { tag: 'err', val: { code: 'no-context', message: 'the host called an export before `init`: no context to act on' } });
  exported.init({ module: 'a' });
  exported.init({ module: 'b' });
  assert.deepEqual(exported.check(), { tag: 'ok', val: { summary: [], commands: [{ tag: 'push', val: 'node-1' }] } });
  assert.deepEqual(seen, [{ module: 'a' }]);
  assert.deepEqual(exported.adopt(), { tag: 'err', val: { code: 'bus-gone', message: 'no' } });
  // A bug is not a refusal: the value handed back throws it when the bindings read it,
  // outside their catch, so the plugin traps with the bug's own error.
  const buggy = exportPlugin({ check: () => null.x, adopt: () => ({}) });
  buggy.init({});
  const trapped = buggy.check();
  assert.equal(trapped.tag, 'ok');
  assert.throws(() => trapped.val.summary, TypeError);
  assert.throws(() => buggy.adopt().val.summary, /`adopt` must return \{ summary: string \}; its summary is undefined/);
});

test('a result of the wrong shape traps naming the shape it should have', () => {
  const exported = (check) => {
    const e = exportPlugin({ check, adopt: () => ({ summary: 'done' }) });
    e.init({});
    return e;
  };
  const read = (result) => () => result.val.summary;
  assert.throws(read(exported(() => ({ summary: 'one line', commands: [] })).check()), /its summary is "one line"/);
  assert.throws(read(exported(() => ({ summary: [], commands: [['push', 'node-1']] })).check()), /its commands are \[\["push","node-1"\]\]/);
  assert.throws(read(exported(async () => ({ summary: [], commands: [] })).check()), /returned a Promise/);
});

test('the packaged WIT is the contract the SDK version names', () => {
  const wit = readFileSync(new URL('../wit/adopter.wit', import.meta.url), 'utf8');
  assert.match(wit, /^package mesh:adopt@0\.2\.0;$/m);
  assert.equal(WIT_PACKAGE, `mesh:adopt@${JSON.parse(readFileSync(new URL('../package.json', import.meta.url))).version}`);
  const source = new URL('../../../sdk/wit/adopter.wit', import.meta.url);
  if (existsSync(source)) assert.equal(wit, readFileSync(source, 'utf8'), 'wit/adopter.wit is a copy of plugins/sdk/wit/adopter.wit');
});
