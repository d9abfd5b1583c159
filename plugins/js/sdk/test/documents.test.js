import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { test } from 'node:test';

import '../testing/fake-host.js';
import { adoptInPlace, exportPlugin, filePath, Manifest, mounts, readManifest, Reads, refuse, WIT_PACKAGE } from '../src/index.js';

const ctx = (image, name) => ({
  module: 'postgres',
  manifest: `{"resources":[{"type":"container","name":"${name}","image":"${image}"}]}`,
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
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'other'), 'store', 'store', 'x'), {
    message:
      "the `postgres` module declares no container named `mesh-store`, so nothing in it adopts the foundation's store; " +
      'its server container must carry the name genesis raised',
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'mesh-store'), 'db', 'database', 'x'), {
    message:
      'the foundation bundle has no `db`, so there is no database for the `postgres` module to adopt; the bundle declares: store, bus-accounts, net',
  });
  assert.throws(() => adoptInPlace(ctx('postgres:16', 'mesh-store'), 'net', 'store', 'x'), {
    message: "the foundation bundle's `net` is a network, not a container: the `postgres` module has no store to adopt",
  });
  assert.equal(filePath(ctx('', '').foundation, 'bus-accounts'), '/etc/bus/users');
  assert.equal(filePath(ctx('', '').foundation, 'store'), '');
});

test('volumes resolve their accesses', () => {
  const m = Manifest.parse(
    '{"resources":[{"type":"container","name":"bus","volumes":["${access:s}:/data","/etc/b:/etc/nats:ro"]},{"type":"service","name":"x"}],"accesses":[{"id":"s","path":"/var/s"}]}',
  );
  const [server] = m.resolvedContainers();
  assert.equal(m.resolvedContainers().length, 1);
  const at = mounts(server.volumes);
  assert.equal(at.get('/data'), '/var/s');
  assert.equal(at.get('/etc/nats'), '/etc/b');
  assert.equal(m.adopt.plugin, 'adopt.wasm');
});

test('a manifest that is not one is refused naming the module', () => {
  assert.throws(() => readManifest('nats', '[1]'), { message: "cannot read the `nats` module's manifest: not a JSON object" });
  assert.throws(() => readManifest('nats', '{'), /^Refusal: cannot read the `nats` module's manifest: not JSON/);
  assert.throws(() => Manifest.parse('{"adopt":{"grants":{"tell":["x"]}}}'), /unknown field `tell`, expected one of `credentials`, `inspect`, `fetch`/);
  assert.throws(() => Manifest.parse('{"resources": 5}'), /^ParseError: not a module manifest: invalid type: integer `5`, expected a sequence/);
});

test('reads the manifest does not grant are refused in check', () => {
  const reads = new Reads().inspect('mesh-bus').fetch('http://127.0.0.1:8222/healthz');
  assert.throws(() => reads.check({ module: 'nats', manifest: '{"adopt":{"grants":{}}}' }), {
    message:
      "the `nats` module's adopt step reads what its manifest does not grant, so the host would deny it mid-adoption:\n" +
      ' - inspect container `mesh-bus`: add "mesh-bus" to `adopt.grants.inspect` in manifest.json\n' +
      ' - fetch `http://127.0.0.1:8222/healthz`: add "http://127.0.0.1:8222/healthz" to `adopt.grants.fetch` in manifest.json\n' +
      'Nothing has been registered',
  });
  reads.check({ module: 'nats', manifest: '{"adopt":{"grants":{"inspect":["mesh-bus"],"fetch":["http://127.0.0.1:8222/*"]}}}' });
  const grants = Manifest.parse('{"adopt":{"grants":{"fetch":["http://127.0.0.1:8222/api/*"]}}}').adopt.grants;
  assert.ok(!grants.allowsFetch('http://127.0.0.1:8222/api/../admin'));
  assert.ok(grants.allowsFetch('http://127.0.0.1:8222/api/streams'));
});

test('refusals are the err side of the export, bugs stay bugs', () => {
  const exported = exportPlugin({
    check: () => ({ summary: [], commands: [] }),
    adopt: () => {
      throw refuse('no');
    },
  });
  assert.deepEqual(exported.check({}), { tag: 'ok', val: { summary: [], commands: [] } });
  assert.deepEqual(exported.adopt({}), { tag: 'err', val: { message: 'no' } });
  // A bug is not a refusal: the value handed back throws it when the bindings read it,
  // outside their catch, so the plugin traps with the bug's own error.
  const buggy = exportPlugin({ check: () => null.x, adopt: () => ({}) });
  const trapped = buggy.check({});
  assert.equal(trapped.tag, 'ok');
  assert.throws(() => trapped.val.summary, TypeError);
  assert.throws(() => buggy.adopt({}).val.summary, /`adopt` must return \{ summary: string \}; its summary is undefined/);
});

test('a result of the wrong shape traps naming the shape it should have', () => {
  const exported = (check) => exportPlugin({ check, adopt: () => ({ summary: 'done' }) });
  const read = (result) => () => result.val.summary;
  assert.throws(read(exported(() => ({ summary: 'one line', commands: [] })).check({})), /its summary is "one line"/);
  assert.throws(read(exported(() => ({ summary: [], commands: ['a b'] })).check({})), /its commands are \["a b"\]/);
  assert.throws(read(exported(async () => ({ summary: [], commands: [] })).check({})), /returned a Promise/);
});

test('the packaged WIT is the contract the SDK version names', () => {
  const wit = readFileSync(new URL('../wit/adopter.wit', import.meta.url), 'utf8');
  assert.match(wit, /^package mesh:adopt@0\.1\.0;$/m);
  assert.equal(WIT_PACKAGE, `mesh:adopt@${JSON.parse(readFileSync(new URL('../package.json', import.meta.url))).version}`);
  const source = new URL('../../../sdk-0.1/wit/adopter.wit', import.meta.url);
  if (existsSync(source)) assert.equal(wit, readFileSync(source, 'utf8'), 'wit/adopter.wit is a copy of plugins/sdk-0.1/wit/adopter.wit');
});
