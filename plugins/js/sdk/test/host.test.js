import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { carryBytes, credential, ErrorKind, fetch, HostCallError, inspect, quoted, tell, tellWithin, words } from '../src/index.js';

beforeEach(() => host.reset());

const PUSH = { tag: 'push', val: 'node-1' };
const failing = (tag, val) => () => ({ hostError: { tag, val } });

test('a failed call names the call and the kind of no', () => {
  const cases = [
    ['denied', 'not granted', 'denied: not granted', 'call-denied'],
    ['failed', 'no such node', 'the mesh said no: no such node', 'call-failed'],
    ['timed-out', 'no answer within 60s', 'timed out: no answer within 60s', 'call-timed-out'],
    ['unavailable', 'no engine', 'unavailable: no engine', 'call-unavailable'],
  ];
  for (const [tag, val, reason, code] of cases) {
    host.reset(failing(tag, val));
    assert.throws(() => tell(PUSH), (e) => {
      assert.ok(e instanceof HostCallError);
      assert.equal(e.message, `failed to tell \`push node-1\`: ${reason}`);
      assert.equal(e.kind, tag);
      assert.equal(e.code, code);
      assert.deepEqual(e.toRecord(), { code, message: e.message });
      assert.equal(e.reason, reason);
      assert.equal(e.call, 'tell `push node-1`');
      return true;
    });
  }
});

test('every call is named as an operator would type it', () => {
  host.reset(failing('denied', 'x'));
  const named = (f) => {
    try {
      f();
    } catch (e) {
      return e.message;
    }
    assert.fail('the call did not fail');
  };
  assert.equal(named(() => carryBytes('m-module.json', 'x', '/m-module.json')), 'failed to carry `m-module.json` to `/m-module.json`: denied: x');
  assert.equal(named(() => credential('store-superuser')), 'failed to get credential `store-superuser`: denied: x');
  assert.equal(named(() => inspect('mesh-bus')), 'failed to inspect container `mesh-bus`: denied: x');
  assert.equal(named(() => fetch('http://127.0.0.1:8222/healthz')), 'failed to fetch `http://127.0.0.1:8222/healthz`: denied: x');
  assert.equal(ErrorKind.TimedOut, 'timed-out');
});

test('a command is quoted in its words, cut after 200 characters, its length given in bytes', () => {
  const placement = { node: 'node-1', module: 'postgres' };
  assert.equal(words({ tag: 'module-add', val: '/postgres-module.json' }), 'module add /postgres-module.json');
  assert.equal(words({ tag: 'module-issue', val: placement }), 'module issue postgres --node node-1');
  assert.equal(words({ tag: 'assign', val: placement }), 'assign node-1 postgres');
  assert.equal(words({ tag: 'prepare', val: placement }), 'prepare node-1 postgres');
  const short = { tag: 'module-add', val: 'a'.repeat(189) };
  assert.equal(quoted(short), `module add ${'a'.repeat(189)}`);
  const long = { tag: 'push', val: 'é'.repeat(150) + 'b'.repeat(100) };
  const command = words(long);
  assert.equal(quoted(long), `${Array.from(command).slice(0, 200).join('')} … (${Buffer.byteLength(command)} bytes)`);
  assert.ok(quoted(long).endsWith('… (405 bytes)'));
});

test('timeouts go to the host as given', () => {
  tell(PUSH);
  const build = { tag: 'build', val: { repository: 'x', module: 'm', ref: 'main' } };
  tellWithin(build, 1500);
  assert.deepEqual(host.calls, [['tell', PUSH, 60], ['tell', build, 1500]]);
});

test('the global fetch says to use the contract\'s', () => {
  assert.throws(() => globalThis.fetch('http://127.0.0.1:8222/healthz'), /use `fetch` from '@mesh-adopt\/sdk'/);
});
