/**
 * What a module's `adopt` will read on the node, checked in `check` against what its manifest
 * grants.
 *
 * The host denies an inspect or a fetch the manifest's `adopt.grants` does not list, but
 * `check` does neither, so without this a missing grant shows only mid-adoption. Declaring
 * the reads lets `check` refuse before anything is registered, naming the grant to add; the
 * host says which it would deny (`machine.ungranted`), by the rules it denies them by.
 *
 * ```js
 * new Reads().inspect('mesh-bus').fetch('http://127.0.0.1:8222/healthz').check(ctx);
 * ```
 *
 * @module
 */

import { machine } from './bindings.js';
import { refuse } from './refusal.js';

/** The containers a module's `adopt` inspects and the URLs it fetches. */
export class Reads {
  constructor() {
    this.inspects = [];
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

  /** What the grants lack for these reads, as the host says it: one line each, the read and the grant to add. */
  ungranted() {
    return machine.ungranted(this.inspects, this.fetches);
  }

  /** For `check`: refuses (`not-granted`), listing every read the manifest does not grant. */
  check(ctx) {
    const ungranted = this.ungranted();
    if (ungranted.length === 0) return;
    throw refuse(
      'not-granted',
      `the \`${ctx.module}\` module's adopt step reads what its manifest does not grant, so the host ` +
        `would deny it mid-adoption:\n - ${ungranted.join('\n - ')}\nNothing has been registered`,
    );
  }
}
