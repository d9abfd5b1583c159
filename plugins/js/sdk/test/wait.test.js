import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';

import { host } from '../testing/fake-host.js';
import { refuse, seconds, waitForImage, waitUntil, WaitTimedOut } from '../src/index.js';

beforeEach(() => host.reset());

test('a timeout says what was awaited, for how long and what was seen', () => {
  assert.equal(new WaitTimedOut('the bus', 120_000).message, 'gave up waiting for the bus after 120s');
  assert.equal(new WaitTimedOut('the bus', 120_000).code, 'wait-timed-out');
  assert.equal(new WaitTimedOut('the bus', 1500, 'it runs `nats:2`').message, 'gave up waiting for the bus after 1500ms: it runs `nats:2`');
  assert.equal(seconds(1500.7), '1500ms');
});

test('the condition is asked at once, then after each poll until the bound', () => {
  let asked = 0;
  assert.throws(() => waitUntil('x', 10_000, 4_000, () => void asked++), { message: 'gave up waiting for x after 10s' });
  assert.equal(asked, 4); // at 0, 4, 8 and 12 s
  assert.equal(host.clock, 12_000n);
  assert.equal(waitUntil('x', 0, 1, () => 'done'), 'done');
});

test('a refusal from the condition stops the wait as itself', () => {
  assert.throws(() => waitUntil('x', 10_000, 1_000, () => { throw refuse('call-denied', 'denied'); }), { message: 'denied', code: 'call-denied' });
  assert.equal(host.clock, 0n);
});

test('waiting for an image says what the container ran last', () => {
  host.reset((name) => (name === 'inspect' ? { image: 'nats:2.10', running: true } : undefined));
  assert.throws(() => waitForImage('mesh-bus', 'nats:snap', 120_000, 5_000), {
    message: 'gave up waiting for container `mesh-bus` to run `nats:snap` after 120s: it runs `nats:2.10`',
  });
  host.reset((name) => (name === 'inspect' ? { hostError: { tag: 'failed', val: 'engine busy' } } : undefined));
  assert.throws(() => waitForImage('mesh-bus', 'nats:snap', 10_000, 5_000), {
    message: 'gave up waiting for container `mesh-bus` to run `nats:snap` after 10s: it is not there, or the node cannot say',
  });
  host.reset((name) => (name === 'inspect' ? { hostError: { tag: 'denied', val: 'not granted' } } : undefined));
  assert.throws(() => waitForImage('mesh-bus', 'nats:snap', 10_000, 5_000), {
    message: 'failed to inspect container `mesh-bus`: denied: not granted',
  });
});
