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
  try {
    return { tag: 'ok', val: plugin[method](ctx) };
  } catch (e) {
    if (e instanceof Refusal) return { tag: 'err', val: e.toRecord() };
    throw e;
  }
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
