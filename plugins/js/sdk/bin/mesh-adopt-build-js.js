#!/usr/bin/env node
// mesh-adopt-build-js [--out PATH] [PLUGIN_DIR]
//
// Builds a JavaScript adoption plugin into a component for the `mesh:adopt/adopter@0.2.0`
// world: bundles its entry (package.json `main`, else `app.js`) into one ES module,
// componentizes that against the WIT shipped in this package and marks the component with the
// identity of those inputs (see source-identity.js). `mesh-adopt build` runs exactly this.

import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  BundleError,
  PLUGIN_FILE,
  bundle,
  markComponent,
  packageVersion,
  sdkVersion,
  sourceIdentity,
  writeAtomically,
} from './source-identity.js';

const USAGE = 'usage: mesh-adopt-build-js [--out PATH] [PLUGIN_DIR]';
const WORLD = 'adopter';
// StarlingMonkey's features a plugin goes without: `http` (the `fetch` global, which imports
// `wasi:http`) and `fetch-event`; a plugin reaches the network only through the contract.
const DISABLED_FEATURES = ['http', 'fetch-event'];
const WIT = realpathSync(fileURLToPath(new URL('../wit/adopter.wit', import.meta.url)));

function fail(message) {
  process.stderr.write(`mesh-adopt-build-js: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  let out;
  let dir;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(
        `${USAGE}\n\nBuilds the plugin in PLUGIN_DIR (default: the current directory) into a component for\n` +
          `mesh:adopt/${WORLD}@0.2.0, written to PATH (default: PLUGIN_DIR/${PLUGIN_FILE}). The entry is\n` +
          'package.json `main`, else app.js.\n',
      );
      process.exit(0);
    } else if (arg === '--out' || arg === '-o') {
      if (i + 1 >= argv.length) fail(`${arg} needs a path\n${USAGE}`);
      out = argv[++i];
    } else if (arg.startsWith('--out=')) {
      out = arg.slice('--out='.length);
    } else if (arg.startsWith('-') && arg !== '-') {
      fail(`unknown option \`${arg}\`\n${USAGE}`);
    } else if (dir === undefined) {
      dir = arg;
    } else {
      fail(`one plugin directory at a time, not \`${dir}\` and \`${arg}\`\n${USAGE}`);
    }
  }
  dir = resolve(dir ?? '.');
  return { dir, out: resolve(out ?? join(dir, PLUGIN_FILE)) };
}

/** The plugin's entry: package.json `main` if it names one, else `app.js`. */
function entryOf(dir) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) fail(`\`${dir}\` is not a directory`);
  let main = 'app.js';
  const manifest = join(dir, 'package.json');
  if (existsSync(manifest)) {
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(manifest, 'utf8'));
    } catch (e) {
      fail(`cannot read ${manifest}: ${e.message}`);
    }
    if (typeof pkg.main === 'string' && pkg.main !== '') main = pkg.main;
  }
  const entry = resolve(dir, main);
  if (!existsSync(entry)) fail(`the plugin's entry \`${relative(process.cwd(), entry) || entry}\` does not exist`);
  return entry;
}

async function main() {
  const { dir, out } = parseArgs(process.argv.slice(2));
  const entry = entryOf(dir);
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'mesh-adopt-build-js-'));
  try {
    let source;
    try {
      source = await bundle(entry, dir, work);
    } catch (e) {
      if (e instanceof BundleError) fail(e.message);
      throw e;
    }
    const identity = sourceIdentity({
      source: source.bytes,
      wit: readFileSync(WIT),
      componentizeJs: packageVersion('@bytecodealliance/componentize-js'),
      sdk: sdkVersion(),
      features: DISABLED_FEATURES.join(','),
    });
    const { componentize } = await import('@bytecodealliance/componentize-js');
    let component;
    try {
      ({ component } = await componentize({
        sourcePath: source.path,
        witPath: WIT,
        worldName: WORLD,
        disableFeatures: DISABLED_FEATURES,
      }));
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      fail(`componentize-js could not build ${entry}:\n${text}`);
    }
    const marked = markComponent(component, identity);
    try {
      writeAtomically(out, marked);
    } catch (e) {
      fail(`cannot write ${out}: ${e.message}`);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`built ${out} (${marked.byteLength} bytes, source ${identity}) from ${entry} in ${seconds}s\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
