/**
 * What a module's `adopt` will read on the node, checked in `check` against what its manifest
 * grants.
 *
 * The host denies an inspect or a fetch the manifest's `adopt.grants` does not list, but
 * `check` does neither, so without this a missing grant shows only mid-adoption: after the
 * push, say, as a wait that never sees its server. Declaring the reads lets `check` refuse
 * before anything is registered, naming the grant to add.
 *
 * ```js
 * new Reads().inspect('mesh-bus').fetch('http://127.0.0.1:8222/healthz').check(ctx);
 * ```
 *
 * @module
 */

import { readManifest } from './manifest.js';
import { refuse } from './refusal.js';

/** The containers a module's `adopt` inspects and the URLs it fetches. */
export class Reads {
  constructor() {
    /** @type {string[]} */
    this.inspects = [];
    /** @type {string[]} */
    this.fetches = [];
  }

  /** `adopt` inspects the container `name`; returns this, to chain. */
  inspect(name) {
    this.inspects.push(name);
    return this;
  }

  /** `adopt` fetches `url`; returns this, to chain. */
  fetch(url) {
    this.fetches.push(url);
    return this;
  }

  /**
   * What `grants` lacks for these reads, one line each: the read and the grant to add.
   *
   * @param {import('./manifest.js').Grants} grants
   * @returns {string[]}
   */
  ungranted(grants) {
    return [
      ...this.inspects
        .filter((name) => !grants.allowsInspect(name))
        .map((name) => `inspect container \`${name}\`: add "${name}" to \`adopt.grants.inspect\` in manifest.json`),
      ...this.fetches
        .filter((url) => !grants.allowsFetch(url))
        .map((url) => `fetch \`${url}\`: add "${url}" to \`adopt.grants.fetch\` in manifest.json`),
    ];
  }

  /**
   * For `check`: refuses, listing every read the module's manifest does not grant and the
   * grant that would allow it.
   *
   * @param {import('../index.js').Context} ctx
   */
  check(ctx) {
    const module = ctx.module;
    const ungranted = this.ungranted(readManifest(module, ctx.manifest).adopt.grants);
    if (ungranted.length === 0) return;
    throw refuse(
      `the \`${module}\` module's adopt step reads what its manifest does not grant, so the host ` +
        `would deny it mid-adoption:\n - ${ungranted.join('\n - ')}\nNothing has been registered`,
    );
  }
}
