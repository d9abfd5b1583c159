/**
 * A genesis credential handed over to the module as one of its secrets: carried to
 * `/accepting-<secret>`, then accepted, just before the push.
 *
 * A server genesis raised already has its password; the mesh cannot make up that value, and a
 * push without it would seal random bytes where the working one has to be. One
 * {@link Handover} gives the plan its command, `check` its refusals and `adopt` its
 * before-push step, so what the operator reviews is what runs.
 *
 * @module
 */

import { carrySecret, credential, HostCallError, say, tell } from './host.js';
import { acceptCommand } from './provider.js';
import { refuse } from './refusal.js';

/** One genesis credential to be accepted as one module secret. */
export class Handover {
  /** Genesis credential `credential` (granted) becomes secret `secret` (declared); `what` names it: "the store's superuser". */
  constructor(ctx, secret, credential, what) {
    this.ctx = ctx;
    this.secret = secret;
    this.credential = credential;
    this.what = what;
  }

  /** The `secret accept …` command, as the plan lists it before the push. */
  command() {
    return acceptCommand(this.ctx, this.secret);
  }

  /** The plan's line for it. */
  summary() {
    return `carry genesis credential \`${this.credential}\` in as secret \`${this.secret}\` before the push`;
  }

  /**
   * For `check`: refuses unless the manifest declares the secret (the node would not take it
   * otherwise) and the host can hand the credential over now.
   */
  check() {
    const { module, manifest } = this.ctx;
    if (!manifest.secrets.includes(this.secret)) {
      const listed = manifest.secrets.length === 0 ? 'none' : manifest.secrets.map((s) => `\`${s}\``).join(', ');
      throw refuse(
        'secret-not-declared',
        `the \`${module}\` module's manifest declares no secret \`${this.secret}\` (it declares ${listed}), so the ` +
          `node would not accept ${this.what} as one of its secrets: add "${this.secret}" to \`secrets\` in its ` +
          'manifest.json. Nothing has been registered',
      );
    }
    this.#credential();
  }

  /** For `adopt`, as the provider sequence's before-push step: carries the credential in and accepts it. */
  deliver() {
    const handle = this.#credential();
    const accept = this.command();
    carrySecret(handle, accept.val.source);
    tell(accept);
    say(`accepted ${this.secret}: ${this.what}, as genesis made it`);
  }

  /** The credential's handle, or the refusal for one the host cannot hand over. */
  #credential() {
    try {
      return credential(this.credential);
    } catch (e) {
      if (!(e instanceof HostCallError)) throw e;
      throw refuse(
        'credential-unavailable',
        `${this.what} (genesis credential \`${this.credential}\`) cannot be had (${e.reason}), so the \`${this.ctx.module}\` module would have nothing ` +
          'to open its server with, and the mesh cannot make up the one the server already has',
      );
    }
  }
}
