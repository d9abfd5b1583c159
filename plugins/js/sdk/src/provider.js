/**
 * The sequence every provider module is installed by: carry and register the manifest, build
 * it from the catalogue source, issue its account, assign and prepare it on the node, run the
 * module's own step, push.
 *
 * The plan `check` shows and the calls `adopt` makes come from the same {@link Provider}, so
 * the plan an operator reviews is the sequence that runs. Commands are WIT `command` values.
 *
 * @module
 */

import { HostCallError, carryBytes, say, tell, tellWithin } from './host.js';
import { refuse } from './refusal.js';

/** The ref built when the operator names none. */
export const DEFAULT_REF = 'main';

/** How long a plugin lets the build take: longer than its own wait, so the control plane reports its own timeout. */
export const BUILD_TIMEOUT_SECONDS = 1500;

/** One module's provider sequence. */
export class Provider {
  /** `buildNote` tells the operator what the build is for, e.g. that the server is adopted, not built. */
  constructor(ctx, buildNote = '') {
    this.ctx = ctx;
    this.buildNote = buildNote;
  }

  /** Where the manifest is carried to in the control plane. */
  manifestRemote() {
    return `/${this.ctx.module}-module.json`;
  }

  /** The sequence's commands before the module's own step, in order; refused when there is nothing to build from. */
  beforeOwnStep() {
    const { module } = this.ctx;
    const { node, catalogSource: source } = this.ctx.options;
    if (source == null) {
      throw refuse(
        'no-catalogue-source',
        `the \`${module}\` module must be built, and no catalogue source was given to build it from ` +
          '(--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest ' +
          'is read; a builder clones the catalogue repository',
      );
    }
    const placement = { node, module };
    return [
      { tag: 'module-add', val: this.manifestRemote() },
      { tag: 'build', val: { repository: source.repository, module, ref: source.ref ?? DEFAULT_REF } },
      { tag: 'module-issue', val: placement },
      { tag: 'assign', val: placement },
      { tag: 'prepare', val: placement },
    ];
  }

  /** The commands the sequence tells, in order, with `beforePush` (commands) where the module's own step goes. */
  commands(beforePush = []) {
    return [...this.beforeOwnStep(), ...beforePush, { tag: 'push', val: this.ctx.options.node }];
  }

  /**
   * Runs the sequence; `beforePush()` is the module's own step. A failed call refuses naming
   * it; a module refused its bus account goes on, since one with nothing to say there gets none.
   */
  install(beforePush = () => {}) {
    const m = this.ctx.module;
    const n = this.ctx.options.node;
    const [add, build, issue, assign, prepare] = this.beforeOwnStep();
    carryBytes(`${m}-module.json`, this.ctx.manifestBytes, this.manifestRemote());
    tell(add);
    say(`registered ${m}`);

    say(`building ${m} ${this.buildNote}`.trimEnd());
    tellWithin(build, BUILD_TIMEOUT_SECONDS);

    let issued = true;
    try {
      tell(issue);
    } catch (e) {
      if (!(e instanceof HostCallError)) throw e;
      issued = false;
    }
    say(issued ? `account issued for ${m}` : `no account for ${m}: it declares nothing to say on the bus`);

    tell(assign);
    tell(prepare);
    say(`prepared ${m} on ${n}`);
    beforePush();
    tell({ tag: 'push', val: n });
    say(`pushed ${n}`);
  }
}

/** The command that accepts `secret` into the module from where it was carried, `/accepting-<secret>`. */
export function acceptCommand(ctx, secret) {
  const val = { node: ctx.options.node, module: ctx.module, secret, source: `/accepting-${secret}` };
  return { tag: 'secret-accept', val };
}
