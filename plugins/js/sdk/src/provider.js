/**
 * The sequence every provider module is installed by: carry and register the manifest, build
 * it from the catalogue source, issue its account, assign and prepare it on the node, run the
 * module's own step, push.
 *
 * The plan `check` shows and the calls `adopt` makes come from the same {@link Provider}, so
 * the plan an operator reviews is the sequence that runs.
 *
 * @module
 */

import { BUILD_TIMEOUT_SECONDS, Command, DEFAULT_REF, acceptingRemote, manifestRemote } from './command.js';
import { HostCallError, carryBytes, say, tell, tellWithin } from './host.js';
import { refuse } from './refusal.js';

/** One module's provider sequence. */
export class Provider {
  /**
   * @param {import('../index.js').Context} ctx
   * @param {string} [buildNote] tells the operator what the build is for, e.g. that the
   *   server is adopted, not built
   */
  constructor(ctx, buildNote = '') {
    this.ctx = ctx;
    this.buildNote = buildNote;
  }

  /** The module the sequence installs. */
  get module() {
    return this.ctx.module;
  }

  /** The node it is installed on. */
  get node() {
    return this.ctx.options.node;
  }

  /** Where the manifest is carried to in the control plane. */
  manifestRemote() {
    return manifestRemote(this.module);
  }

  /** The build command, refused when there is nothing to build from. */
  buildCommand() {
    const source = this.ctx.options.catalogSource;
    if (source == null) {
      throw refuse(
        `the \`${this.module}\` module must be built, and no catalogue source was given to build it from ` +
          '(--catalog-source REPO[@REF]): the catalogue checkout is only where its manifest ' +
          'is read; a builder clones the catalogue repository',
      );
    }
    return Command.build(source.repository, this.module, source.ref ?? DEFAULT_REF);
  }

  /** The sequence's commands before the module's own step, in order. */
  beforeOwnStep() {
    const { module, node } = this;
    return [
      Command.moduleAdd(this.manifestRemote()),
      this.buildCommand(),
      Command.moduleIssue(module, node),
      Command.assign(node, module),
      Command.prepare(node, module),
    ];
  }

  /**
   * The commands the sequence tells, in order, with `beforePush` where the module's own step
   * goes: the plan's `commands`. Refuses as {@link Provider#install} would when there is
   * nothing to build from.
   *
   * @param {string[][]} [beforePush]
   * @returns {string[][]}
   */
  commands(beforePush = []) {
    return [...this.beforeOwnStep(), ...beforePush, Command.push(this.node)];
  }

  /**
   * Runs the sequence; `beforePush` is the module's own step, run just before the push. A
   * failed call refuses naming it; a module refused its bus account goes on, since one that
   * declares nothing to say on the bus is given none.
   *
   * @param {() => void} [beforePush]
   */
  install(beforePush = () => {}) {
    const { module: m, node: n } = this;
    const [add, build, issue, assign, prepare] = this.beforeOwnStep();
    carryBytes(`${m}-module.json`, this.ctx.manifest, this.manifestRemote());
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
    tell(Command.push(n));
    say(`pushed ${n}`);
  }
}

/**
 * The command that accepts `secret` into the module from where it was carried: what a plan
 * lists before the push and what {@link Handover#deliver} tells.
 *
 * @param {import('../index.js').Context} ctx
 * @param {string} secret
 * @returns {string[]}
 */
export function acceptCommand(ctx, secret) {
  return Command.secretAccept(ctx.options.node, ctx.module, secret, acceptingRemote(secret));
}
