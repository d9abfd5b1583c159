// The values this SDK restates from the Rust side, held to the Rust source they are declared
// in (the manifest crate, the Rust SDK, the host's build), so neither side changes alone. Read
// from the repository the SDK sits in; a copy of the SDK outside it has no Rust to compare with.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';

import { PLUGIN_FILE, SOURCE_SECTION } from '../bin/source-identity.js';
import { SHOWN } from '../src/host.js';
import {
  BUILD_TIMEOUT_SECONDS,
  DEFAULT_REF,
  TELL_TIMEOUT_SECONDS,
  WORLD,
  acceptCommand,
  Provider,
} from '../src/index.js';

const REPOSITORY = new URL('../../../../', import.meta.url);
const outside = existsSync(new URL('plugins/Cargo.toml', REPOSITORY)) ? false : 'the SDK is not in its repository';

const source = (path) => readFileSync(new URL(path, REPOSITORY), 'utf8');

/** The crate's own version, as `env!("CARGO_PKG_VERSION")` reads it: `version` under `[package]`. */
function crateVersion(path) {
  const crate = new URL(`${path.slice(0, path.lastIndexOf('/src/'))}/Cargo.toml`, REPOSITORY);
  const version = /^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(readFileSync(crate, 'utf8'));
  assert.ok(version, `no [package] version in ${crate.pathname}`);
  return version[1];
}

/** The Rust files at `path`: the file itself, or every one under the directory (for a crate whose files move). */
function rustFiles(path) {
  if (!statSync(new URL(path, REPOSITORY)).isDirectory()) return [path];
  const under = readdirSync(new URL(path, REPOSITORY), { recursive: true });
  return under.filter((file) => file.endsWith('.rs')).sort().map((file) => `${path}/${file}`);
}

/**
 * A constant's value, from its one `[pub] const NAME: T = value;` line in the Rust file at
 * `at`, or in the files under it: a string, an integer, or a `concat!` of strings and the
 * crate's version.
 */
function rustConst(at, name) {
  const declaration = new RegExp(`^\\s*(?:pub\\s+)?const\\s+${name}\\s*:[^=]+=\\s*(.+);\\s*$`, 'm');
  const found = rustFiles(at).flatMap((file) => {
    const line = declaration.exec(source(file));
    return line ? [[file, line]] : [];
  });
  assert.equal(found.length, 1, `${at} declares \`const ${name}\` in ${found.length} files, not one`);
  const [[path, line]] = found;
  const value = line[1];
  if (/^"(?:[^"\\]|\\.)*"$/.test(value)) return JSON.parse(value);
  if (/^\d[\d_]*(?:[ui](?:8|16|32|64|size))?$/.test(value)) return Number(value.replace(/[ui]\w+$|_/g, ''));
  const parts = /^concat!\((.*)\)$/.exec(value);
  if (parts) {
    return parts[1]
      .split(/,\s*/)
      .map((part) => (part === 'env!("CARGO_PKG_VERSION")' ? crateVersion(path) : JSON.parse(part)))
      .join('');
  }
  assert.fail(`${path}: \`${name}\` is \`${value}\`, not a value this test reads`);
}

/** A `pub fn name(arg: &str) -> String { format!("…{arg}…") }` of the Rust file at `path`, as a function. */
function rustFormat(path, name) {
  const literal = '("(?:[^"\\\\]|\\\\.)*")';
  const fn = new RegExp(`pub fn ${name}\\((\\w+): &str\\) -> String \\{\\s*format!\\(${literal}\\)\\s*\\}`).exec(source(path));
  assert.ok(fn, `${path} declares no \`fn ${name}\` that formats its argument`);
  const [, arg, template] = fn;
  return (value) => JSON.parse(template).replaceAll(`{${arg}}`, value);
}

const MANIFEST_COMMAND = 'plugins/manifest/src/command.rs';

/**
 * Each constant this SDK restates, by its name on both sides, with the Rust file declaring it
 * (the host's, whose files move, with the directory of its command's sources).
 */
const HELD = [
  ['DEFAULT_REF', DEFAULT_REF, MANIFEST_COMMAND],
  ['BUILD_TIMEOUT_SECONDS', BUILD_TIMEOUT_SECONDS, MANIFEST_COMMAND],
  ['PLUGIN_FILE', PLUGIN_FILE, 'plugins/manifest/src/lib.rs'],
  ['TELL_TIMEOUT_SECONDS', TELL_TIMEOUT_SECONDS, 'plugins/sdk/src/host.rs'],
  ['SHOWN', SHOWN, 'plugins/sdk/src/host.rs'],
  ['WORLD', WORLD, 'plugins/sdk/src/lib.rs'],
  ['SOURCE_SECTION', SOURCE_SECTION, 'host/cli/src'],
];

test('the constants are the Rust ones', { skip: outside }, () => {
  for (const [name, value, path] of HELD) assert.equal(value, rustConst(path, name), `${name} differs from ${path}'s`);
});

test("the remote paths are the manifest crate's", { skip: outside }, () => {
  const ctx = { module: 'postgres', options: { node: 'node-1' } };
  const [manifest, accepting] = ['manifest_remote', 'accepting_remote'].map((fn) => rustFormat(MANIFEST_COMMAND, fn));
  assert.equal(new Provider(ctx).manifestRemote(), manifest('postgres'), 'manifestRemote differs from manifest_remote');
  const from = acceptCommand(ctx, 'superuser').val.source;
  assert.equal(from, accepting('superuser'), "acceptCommand's source differs from accepting_remote");
});
