import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  SOURCE_SECTION,
  bundle,
  customSection,
  markComponent,
  sourceIdentity,
  uleb128,
  writeAtomically,
} from '../bin/source-identity.js';

/** The smallest component: the preamble (magic, version 0x0d, layer 1) and no sections. */
const EMPTY_COMPONENT = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);

/** A fresh plugin directory with an entry importing a second file, removed after the test. */
function plugin(t) {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-adopt-source-identity-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'app.js'), "import { name } from './name.js';\nexport const adopter = { name };\n");
  writeFileSync(join(dir, 'name.js'), "export const name = 'vault';\n");
  return dir;
}

/** The identity a build of `dir` would have, bundling as the build command does. */
async function identityOf(dir) {
  const work = mkdtempSync(join(tmpdir(), 'mesh-adopt-source-identity-work-'));
  try {
    const { bytes } = await bundle(join(dir, 'app.js'), dir, work);
    return sourceIdentity({ source: bytes, wit: 'package mesh:adopt@0.1.0;\n', componentizeJs: '0.23.0', sdk: '0.1.0' });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

test('sizes are unsigned LEB128, seven bits a byte', () => {
  assert.deepEqual([...uleb128(0)], [0x00]);
  assert.deepEqual([...uleb128(127)], [0x7f]);
  assert.deepEqual([...uleb128(128)], [0x80, 0x01]);
  assert.deepEqual([...uleb128(300)], [0xac, 0x02]);
  assert.deepEqual([...uleb128(16_384)], [0x80, 0x80, 0x01]);
  assert.deepEqual([...uleb128(0xffff_ffff)], [0xff, 0xff, 0xff, 0xff, 0x0f]);
  assert.throws(() => uleb128(-1), RangeError);
  assert.throws(() => uleb128(2 ** 32), RangeError);
});

test('a custom section is id 0, its size, the name with its length, then the payload', () => {
  const identity = `sha256:${'ab'.repeat(32)}`;
  const section = customSection(SOURCE_SECTION, Buffer.from(identity));
  const name = Buffer.from('mesh-adopt:source');
  assert.equal(section[0], 0x00);
  assert.equal(section[1], 1 + name.length + identity.length); // 89: one byte
  assert.equal(section[2], name.length);
  assert.deepEqual(section.subarray(3, 3 + name.length), name);
  assert.equal(section.subarray(3 + name.length).toString('ascii'), identity);
  assert.equal(section.length, 2 + section[1]);
});

test('a section of 128 bytes or more has a two-byte size', () => {
  const payload = Buffer.alloc(200, 0x61);
  const section = customSection('x', payload);
  const size = 1 + 1 + payload.length; // 202
  assert.deepEqual([...section.subarray(0, 4)], [0x00, 0x80 | (size & 0x7f), size >> 7, 0x01]);
  assert.equal(section.subarray(4, 5).toString(), 'x');
  assert.deepEqual(section.subarray(5), payload);
});

test('marking appends the section after the component, unchanged', () => {
  const identity = `sha256:${'0f'.repeat(32)}`;
  const marked = markComponent(EMPTY_COMPONENT, identity);
  assert.deepEqual(marked.subarray(0, 8), EMPTY_COMPONENT);
  assert.deepEqual(marked.subarray(8), customSection(SOURCE_SECTION, Buffer.from(identity)));
});

test('the identity is sha256 of the inputs and covers each of them', () => {
  const inputs = { source: 'export {};\n', wit: 'package a;\n', componentizeJs: '0.23.0', sdk: '0.1.0' };
  const identity = sourceIdentity(inputs);
  assert.match(identity, /^sha256:[0-9a-f]{64}$/);
  assert.equal(sourceIdentity({ ...inputs }), identity);
  for (const [key, other] of [['source', 'export {}; \n'], ['wit', 'package b;\n'], ['componentizeJs', '0.23.1'], ['sdk', '0.1.1'], ['features', 'http']]) {
    assert.notEqual(sourceIdentity({ ...inputs, [key]: other }), identity, key);
  }
  // Lengths keep the fields apart: moving a byte from one to the next is a change.
  assert.notEqual(sourceIdentity({ ...inputs, componentizeJs: '0.23.', sdk: '00.1.0' }), identity);
});

test('touching the files keeps the identity; editing one changes it', async (t) => {
  const dir = plugin(t);
  const before = await identityOf(dir);
  const later = new Date(Date.now() + 3_600_000);
  utimesSync(join(dir, 'app.js'), later, later);
  utimesSync(join(dir, 'name.js'), later, later);
  assert.equal(await identityOf(dir), before);
  writeFileSync(join(dir, 'name.js'), "export const name = 'vault-2';\n");
  assert.notEqual(await identityOf(dir), before);
});

test('the bundle names no absolute path, so another checkout gives the same bytes', async (t) => {
  const dir = plugin(t);
  const work = mkdtempSync(join(tmpdir(), 'mesh-adopt-source-identity-work-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const { bytes } = await bundle(join(dir, 'app.js'), dir, work);
  assert.ok(!bytes.toString().includes(dir), bytes.toString());
  assert.ok(!bytes.toString().includes(tmpdir()), bytes.toString());
});

test('the component is written whole, leaving nothing beside it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-adopt-source-identity-out-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'deeper', 'adopt.wasm');
  writeAtomically(out, Buffer.from('one'));
  writeAtomically(out, Buffer.from('two'));
  assert.equal(readFileSync(out, 'utf8'), 'two');
  assert.deepEqual(readdirSync(join(dir, 'deeper')), ['adopt.wasm']);
});

