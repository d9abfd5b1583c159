// What `mesh-adopt-build-js` marks a component with: the identity of the inputs it was built
// from, in a custom section `mesh-adopt:source`. componentize-js snapshots an initialised
// engine whose memory holds random seeds, so two builds of one source differ in their bytes;
// `mesh-adopt build --check` compares this identity instead when they do.

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The file a module's plugin ships as, beside its manifest (`PLUGIN_FILE` in the manifest
 * crate): where the build writes the component when `--out` names no other.
 */
export const PLUGIN_FILE = 'adopt.wasm';

/** The custom section's name, which the host looks for (`SOURCE_SECTION` in its build). */
export const SOURCE_SECTION = 'mesh-adopt:source';

/** The first line of the description hashed, so a change of its layout changes every identity. */
const DESCRIPTION_HEADER = 'mesh-adopt source identity v1 (javascript)\n';

/** Why a plugin could not be bundled, with the bundler's own errors already printed. */
export class BundleError extends Error {}

/** `value` as an unsigned LEB128, the encoding of every size in a WebAssembly binary. */
export function uleb128(value) {
  if (!Number.isSafeInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new RangeError(`a section size is a u32, not ${value}`);
  }
  const bytes = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return Buffer.from(bytes);
}

/** A custom section (id 0); appended after a component's last section, the component ignores it. */
export function customSection(name, payload) {
  const nameBytes = Buffer.from(name, 'utf8');
  const content = Buffer.concat([uleb128(nameBytes.length), nameBytes, Buffer.from(payload)]);
  return Buffer.concat([Buffer.from([0x00]), uleb128(content.length), content]);
}

/**
 * `sha256:<hex>` of the build's inputs (the bundled module, the WIT, the versions of
 * componentize-js and of this SDK), each as its name, its length and its bytes; none holds a
 * path or a time, so unchanged inputs give the same identity on any machine.
 */
export function sourceIdentity({ source, wit, componentizeJs, sdk, features = '' }) {
  const hash = createHash('sha256');
  hash.update(DESCRIPTION_HEADER);
  const fields = [
    ['componentize-js', Buffer.from(String(componentizeJs), 'utf8')],
    ['sdk', Buffer.from(String(sdk), 'utf8')],
    // The engine features left out of the build change the component as a source does.
    ['disabled features', Buffer.from(String(features), 'utf8')],
    ['wit', Buffer.from(wit)],
    ['source', Buffer.from(source)],
  ];
  for (const [name, bytes] of fields) {
    hash.update(`${name} ${bytes.length}\n`);
    hash.update(bytes);
    hash.update('\n');
  }
  return `sha256:${hash.digest('hex')}`;
}

/** `component` with the identity appended as its `mesh-adopt:source` section. */
export function markComponent(component, identity) {
  return Buffer.concat([Buffer.from(component), customSection(SOURCE_SECTION, Buffer.from(identity, 'ascii'))]);
}

/** The version of the installed package `specifier`, from the package.json above its entry. */
export function packageVersion(specifier) {
  let dir = dirname(fileURLToPath(import.meta.resolve(specifier)));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      if (pkg.name === specifier) return String(pkg.version);
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of \`${specifier}\` above its entry`);
    dir = parent;
  }
}

/** This SDK's version, from its own package.json, which the identity covers. */
export function sdkVersion() {
  return String(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
}

/**
 * One ES module holding the entry and all it imports but the world's own imports, written to
 * `into/plugin.js`; returns its path and bytes. Paths in it are relative to `dir`, the
 * plugin's directory, so they are the same wherever the build is run from.
 */
export async function bundle(entry, dir, into) {
  const { build } = await import('esbuild');
  const outfile = join(into, 'plugin.js');
  try {
    await build({
      entryPoints: [entry],
      outfile,
      absWorkingDir: dir,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['import', 'default'],
      target: 'es2022',
      // The world's imports (and WASI) are the component's, wired by componentize-js.
      external: ['mesh:*', 'wasi:*'],
      logLevel: 'error',
      legalComments: 'none',
    });
  } catch {
    // esbuild has printed its errors.
    throw new BundleError(`could not bundle ${entry}`);
  }
  return { path: outfile, bytes: readFileSync(outfile) };
}

/** Writes `bytes` beside `out` and renames it into place, so `out` is never a part of a component. */
export function writeAtomically(out, bytes) {
  mkdirSync(dirname(out), { recursive: true });
  const temporary = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, bytes, { flag: 'wx' });
    renameSync(temporary, out);
  } catch (e) {
    rmSync(temporary, { force: true });
    throw e;
  }
}
