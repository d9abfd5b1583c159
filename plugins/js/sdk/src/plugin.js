/**
 * Registering a plugin as the component's `check` and `adopt` exports.
 *
 * @module
 */

import { Refusal } from './refusal.js';

/** The WIT package this SDK is built against; the package's version is the contract's. */
export const WIT_PACKAGE = 'mesh:adopt@0.1.0';

/** The world a plugin built with this SDK targets: what a manifest's `adopt.world` names. */
export const WORLD = 'mesh:adopt/adopter@0.1.0';

/**
 * Runs one export: a value is the `ok` side of its WIT result, a thrown {@link Refusal} (a
 * failed host call and a timed-out wait are ones) the `err` side. Anything else thrown is a
 * bug in the plugin and traps, as a panic does, so the host reports it as the plugin's fault
 * rather than as a reasoned "no".
 */
function run(plugin, method, ctx) {
  let value;
  try {
    value = shaped(method, plugin[method](ctx));
  } catch (e) {
    if (e instanceof Refusal) return { tag: 'err', val: e.toRecord() };
    return trap(e);
  }
  return { tag: 'ok', val: value };
}

const isLines = (value) => Array.isArray(value) && value.every((line) => typeof line === 'string');

/**
 * `method`'s result, or a `TypeError` naming what it should have been: a string summary
 * would otherwise reach the host as a plan line per character, and a Promise as nothing.
 */
function shaped(method, value) {
  if (typeof value?.then === 'function') {
    throw new TypeError(`\`${method}\` returned a Promise: \`check\` and \`adopt\` are synchronous, as every host call is`);
  }
  if (method === 'check') {
    if (!isLines(value?.summary)) {
      throw new TypeError(`\`check\` must return { summary: string[], commands: string[][] }; its summary is ${JSON.stringify(value?.summary)}`);
    }
    if (!Array.isArray(value.commands) || !value.commands.every(isLines)) {
      throw new TypeError(`\`check\` must return { summary: string[], commands: string[][] }; its commands are ${JSON.stringify(value.commands)}`);
    }
  } else if (typeof value?.summary !== 'string') {
    throw new TypeError(`\`adopt\` must return { summary: string }; its summary is ${JSON.stringify(value?.summary)}`);
  }
  return value;
}

/**
 * Makes `error` trap the plugin. componentize-js turns whatever an export throws into its
 * `err` side, so a bug thrown from `check` would reach the host as a refusal in the bug's
 * words. What an export returns is read outside that catch: a value whose first field
 * throws `error` when read ends the call there, uncaught, and the engine prints it with its
 * stack to stderr, which the host shows with the stop.
 */
function trap(error) {
  const thrown = () => {
    throw error;
  };
  return { tag: 'ok', val: { get summary() { return thrown(); }, get commands() { return thrown(); } } };
}

/**
 * A module's adoption rules as the `adopter` world's exports: `check` and `adopt`, to be
 * exported by the plugin's entry module, which is what componentize-js wires to the world.
 *
 * ```js
 * export const { check, adopt } = exportPlugin(new Postgres());
 * ```
 *
 * `plugin` is any object (a class instance, a plain object) with `check(ctx)`, which decides
 * without changing anything and returns the plan (`{ summary, commands }`), and `adopt(ctx)`,
 * which adopts and returns the report (`{ summary }`). Both refuse by throwing a `Refusal`.
 *
 * @param {{check(ctx: object): object, adopt(ctx: object): object}} plugin
 * @returns {{check(ctx: object): object, adopt(ctx: object): object}}
 */
export function exportPlugin(plugin) {
  for (const method of ['check', 'adopt']) {
    if (typeof plugin?.[method] !== 'function') {
      throw new TypeError(`an adoption plugin needs a \`${method}(ctx)\` method`);
    }
  }
  return {
    check: (ctx) => run(plugin, 'check', ctx),
    adopt: (ctx) => run(plugin, 'adopt', ctx),
  };
}
