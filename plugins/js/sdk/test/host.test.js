import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { carryBytes, credential, ErrorKind, fetch, HostCallError, inspect, quoted, tell, tellWithin } from '../src/index.js';

beforeEach(() => host.reset());

const failing = (tag, val) => () => ({ hostError: { tag, val } });

test('a failed call names the call and the kind of no', () => {
  const cases = [
    ['denied', 'not granted', 'denied: not granted'],
    ['failed', 'no such node', 'the mesh said no: no such node'],
    ['timed-out', 'no answer within 60s', 'timed out: no answer within 60s'],
    ['unavailable', 'no engine', 'unavailable: no engine'],
  ];
  for (const [tag, val, reason] of cases) {
    host.reset(failing(tag, val));
    assert.throws(() => tell(['push', 'node-1']), (e) => {
      assert.ok(e instanceof HostCallError);
      assert.equal(e.message, `failed to tell \`push node-1\`: ${reason}`);
      assert.equal(e.kind, tag);
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

test('a long command is cut after 200 characters, its length given in bytes', () => {
  const short = ['a'.repeat(200)];
  assert.equal(quoted(short), 'a'.repeat(200));
  const long = ['é'.repeat(150), 'b'.repeat(100)];
  const command = long.join(' ');
  assert.equal(quoted(long), `${Array.from(command).slice(0, 200).join('')} … (${Buffer.byteLength(command)} bytes)`);
  assert.ok(quoted(long).endsWith('… (401 bytes)'));
});

test('timeouts go to the host as given', () => {
  tell(['push', 'node-1']);
  tellWithin(['build', 'x'], 1500);
  assert.deepEqual(host.calls, [['tell', 'push node-1', 60], ['tell', 'build x', 1500]]);
});
