/**
 * Registering a plugin as the component's `init`, `check` and `adopt` exports.
 *
 * @module
 */

import { Refusal, refuse } from './refusal.js';

/** The WIT package this SDK is built against; the package's version is the contract's. */
export const WIT_PACKAGE = 'mesh:adopt@0.2.0';

/** The world a plugin built with this SDK targets: what a manifest's `adopt.world` names. */
export const WORLD = 'mesh:adopt/adopter@0.2.0';

/**
 * Runs one export on the context `init` was given: a value is the `ok` side of its result, a
 * thrown {@link Refusal} the `err` side; anything else thrown is a bug and traps, as a panic does.
 */
function run(plugin, method, ctx) {
  let value;
  try {
    if (ctx === undefined) throw refuse('no-context', 'the host called an export before `init`: no context to act on');
    value = shaped(method, plugin[method](ctx));
  } catch (e) {
    if (e instanceof Refusal) return { tag: 'err', val: e.toRecord() };
    return trap(e);
  }
  return { tag: 'ok', val: value };
}

const isLines = (value) => Array.isArray(value) && value.every((line) => typeof line === 'string');
const isCommands = (value) => Array.isArray(value) && value.every((c) => typeof c?.tag === 'string' && 'val' in c);

/** `method`'s result, or a `TypeError` naming what it should have been (a string summary would be a line per character). */
function shaped(method, value) {
  const wrong = (what, shape, v) => new TypeError(`\`${method}\` must return ${shape}; its ${what} ${JSON.stringify(v)}`);
  if (typeof value?.then === 'function') {
    throw new TypeError(`\`${method}\` returned a Promise: \`check\` and \`adopt\` are synchronous, as every host call is`);
  }
  const plan = '{ summary: string[], commands: Command[] }';
  if (method === 'check' && !isLines(value?.summary)) throw wrong('summary is', plan, value?.summary);
  if (method === 'check' && !isCommands(value.commands)) throw wrong('commands are', plan, value.commands);
  if (method === 'adopt' && typeof value?.summary !== 'string') throw wrong('summary is', '{ summary: string }', value?.summary);
  return value;
}

/**
 * Makes `error` trap the plugin. componentize-js turns whatever an export throws into its
 * `err` side, so a bug would reach the host as a refusal in the bug's words; a value whose
 * first field throws `error` when read ends the call outside that catch instead, and the
 * engine prints it with its stack to stderr, which the host shows with the stop.
 */
function trap(error) {
  const thrown = () => {
    throw error;
  };
  return { tag: 'ok', val: { get summary() { return thrown(); }, get commands() { return thrown(); } } };
}

/**
 * A module's adoption rules as the world's exports, for the plugin's entry module to export:
 * `export const { init, check, adopt } = exportPlugin(new Postgres());`
 *
 * `plugin.check(ctx)` decides without changing anything and returns the plan (`{ summary,
 * commands }`); `plugin.adopt(ctx)` adopts and returns the report (`{ summary }`); both refuse
 * by throwing a `Refusal`. Both get the one context the host handed `init`.
 */
export function exportPlugin(plugin) {
  for (const method of ['check', 'adopt']) {
    if (typeof plugin?.[method] !== 'function') {
      throw new TypeError(`an adoption plugin needs a \`${method}(ctx)\` method`);
    }
  }
  let given;
  return {
    // A second `init` keeps the first context.
    init: (ctx) => {
      given ??= ctx;
    },
    check: () => run(plugin, 'check', given),
    adopt: () => run(plugin, 'adopt', given),
  };
}
