/**
 * A catalogue module's `manifest.json`, as adoption rules read it: the same fields, defaults
 * and refusals as the host's reader, so a plugin and its host never disagree on what a
 * manifest says.
 *
 * @module
 */

import { refuse } from './refusal.js';
import { withinGrant } from './urls.js';

/** The file a module's plugin ships as, beside its manifest, unless the manifest names another. */
export const PLUGIN_FILE = 'adopt.wasm';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Why bytes are not a module manifest; its message is what the host's reader says. */
export class ParseError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ParseError';
  }
}

// The shape, as the host declares it: each field's JSON name, its property here and its type.
const str = { expected: 'a string', read: (v) => (typeof v === 'string' ? v : undefined) };
const optStr = { expected: 'a string', optional: true, read: str.read };
const strings = { list: str };
const struct = (name, fields, { denyUnknown = false } = {}) => ({ struct: name, fields, denyUnknown });

const GRANTS = struct('Grants', { credentials: ['credentials', strings], inspect: ['inspect', strings], fetch: ['fetch', strings] }, { denyUnknown: true });
const ADOPT = struct(
  'AdoptSection',
  { plugin: ['plugin', str], sha256: ['sha256', optStr], world: ['world', optStr], source: ['source', optStr], grants: ['grants', GRANTS] },
  { denyUnknown: true },
);
const RESOURCE = struct('ManifestResource', { id: ['id', str], type: ['kind', str], name: ['name', str], image: ['image', str], volumes: ['volumes', strings] });
const ACCESS = struct('Access', { id: ['id', str], path: ['path', str] });
const MANIFEST = struct('ModuleManifest', {
  name: ['name', str],
  resources: ['resources', { list: RESOURCE }],
  accesses: ['accesses', { list: ACCESS }],
  secrets: ['secrets', strings],
  'bus-subjects': ['busSubjects', strings],
  'bus-users': ['busUsers', str],
  adopt: ['adopt', ADOPT],
});

const DEFAULTS = { AdoptSection: { plugin: PLUGIN_FILE } };

/** A JSON value as serde names what it found instead of what it expected. */
function unexpected(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'sequence';
  switch (typeof v) {
    case 'string': return `string ${JSON.stringify(v)}`;
    case 'boolean': return `boolean \`${v}\``;
    case 'number': return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
    default: return 'map';
  }
}

function shaped(type, v) {
  const wrong = (expected) => new ParseError(`invalid type: ${unexpected(v)}, expected ${expected}`);
  if (type.optional && v === null) return undefined;
  if (type.read) {
    const read = type.read(v);
    if (read === undefined) throw wrong(type.expected);
    return read;
  }
  if (type.list) {
    if (!Array.isArray(v)) throw wrong('a sequence');
    return v.map((item) => shaped(type.list, item));
  }
  if (v === null || typeof v !== 'object') throw wrong(`struct ${type.struct}`);
  // A struct may be given as an array of its fields in order, as serde reads it.
  if (Array.isArray(v)) throw wrong(`struct ${type.struct}`);
  const out = {};
  for (const [, [prop, fieldType]] of Object.entries(type.fields)) out[prop] = empty(fieldType);
  Object.assign(out, DEFAULTS[type.struct]);
  for (const [key, value] of Object.entries(v)) {
    const field = type.fields[key];
    if (field === undefined) {
      if (type.denyUnknown) {
        const names = Object.keys(type.fields).map((k) => `\`${k}\``).join(', ');
        throw new ParseError(`unknown field \`${key}\`, expected one of ${names}`);
      }
      continue;
    }
    out[field[0]] = shaped(field[1], value);
  }
  return out;
}

function empty(type) {
  if (type.optional) return undefined;
  if (type.read) return '';
  if (type.list) return [];
  const out = {};
  for (const [prop, fieldType] of Object.values(type.fields)) out[prop] = empty(fieldType);
  return Object.assign(out, DEFAULTS[type.struct]);
}

/**
 * A module manifest, as far as adoption reads it; fields it leaves out are empty. Built by
 * {@link readManifest} or {@link Manifest.parse}.
 */
export class Manifest {
  /** @param {object} fields the manifest's fields, already of the right shape */
  constructor(fields) {
    Object.assign(this, fields);
    this.adopt.grants = new Grants(this.adopt.grants);
  }

  /**
   * Parses a manifest, saying whether it failed as JSON, as an object or as a manifest, in
   * the host's words (`not JSON: …`, `not a JSON object`, `not a module manifest: …`).
   *
   * @param {Uint8Array | string} bytes
   * @returns {Manifest}
   * @throws {ParseError}
   */
  static parse(bytes) {
    let text;
    try {
      text = typeof bytes === 'string' ? bytes : decoder.decode(bytes);
    } catch {
      throw new ParseError('not JSON: invalid unicode code point');
    }
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new ParseError(`not JSON: ${e.message}`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !/^\s*\{/.test(text)) {
      throw new ParseError('not a JSON object');
    }
    try {
      return new Manifest(shaped(MANIFEST, value));
    } catch (e) {
      if (e instanceof ParseError) throw new ParseError(`not a module manifest: ${e.message}`);
      throw e;
    }
  }

  /** The resources that are containers, in declaration order. */
  containers() {
    return this.resources.filter((r) => r.kind === 'container');
  }

  /**
   * A container's volumes with every `${access:<id>}` replaced by that access's path, each
   * access in declaration order, as the node resolves them.
   *
   * @param {{volumes: string[]}} container
   * @returns {string[]}
   */
  resolvedVolumes(container) {
    return container.volumes.map((volume) =>
      this.accesses.reduce((v, access) => v.split(`\${access:${access.id}}`).join(access.path), volume),
    );
  }

  /** The containers with their volumes resolved, as a node would raise them. */
  resolvedContainers() {
    return this.containers().map((c) => ({ ...c, volumes: this.resolvedVolumes(c) }));
  }
}

/**
 * What a catalogue grants its plugin beyond the host's defaults: reads only.
 */
export class Grants {
  /** @param {{credentials?: string[], inspect?: string[], fetch?: string[]}} [fields] */
  constructor({ credentials = [], inspect = [], fetch = [] } = {}) {
    /** Genesis credentials it may carry in, by name. */
    this.credentials = credentials;
    /** Containers it may inspect, by name. */
    this.inspect = inspect;
    /** URLs it may fetch: exact, or a prefix ending in `*`. */
    this.fetch = fetch;
  }

  /** Whether a plugin may carry in the genesis credential `name`. */
  allowsCredential(name) {
    return this.credentials.includes(name);
  }

  /** Whether a plugin may inspect the container `name`. */
  allowsInspect(name) {
    return this.inspect.includes(name);
  }

  /** Whether a plugin may fetch `url`: an exact grant, or a prefix grant it is plainly under. */
  allowsFetch(url) {
    return this.fetch.some((grant) => withinGrant(grant, url));
  }
}

/**
 * Maps each inside path to the host path mounted there, from `host:inside[:opts]` entries; a
 * later mount of one inside path wins, as on the node.
 *
 * @param {string[]} volumes
 * @returns {Map<string, string>}
 */
export function mounts(volumes) {
  const at = new Map();
  for (const v of volumes) {
    const first = v.indexOf(':');
    if (first < 0) continue;
    const second = v.indexOf(':', first + 1);
    at.set(second < 0 ? v.slice(first + 1) : v.slice(first + 1, second), v.slice(0, first));
  }
  return at;
}

/** The last manifest read: `check` and `adopt` run on one instance with the same manifest. */
let lastRead;

function sameBytes(a, b) {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Reads a module's manifest, refusing with the module's name (``cannot read the `<module>`
 * module's manifest: …``) when it is not JSON of the expected shape. Reading the same bytes
 * again hands back the manifest already read.
 *
 * @param {string} module
 * @param {Uint8Array | string} bytes `ctx.manifest`
 * @returns {Manifest}
 */
export function readManifest(module, bytes) {
  if (lastRead !== undefined && sameBytes(lastRead.bytes, bytes)) return lastRead.manifest;
  let manifest;
  try {
    manifest = Manifest.parse(bytes);
  } catch (e) {
    if (e instanceof ParseError) throw refuse(`cannot read the \`${module}\` module's manifest: ${e.message}`);
    throw e;
  }
  lastRead = { bytes: typeof bytes === 'string' ? bytes : bytes.slice(), manifest };
  return manifest;
}
