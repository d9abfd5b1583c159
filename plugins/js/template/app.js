// The `{{module}}` module: installed by the shared provider sequence. Add its own rules here:
// read `ctx.manifest` (parsed by the host) and `ctx.foundation`, refuse with
// `throw refuse('some-code', '...')` before anything is registered, and do the module's own
// step in the function passed to `install`.

import { exportPlugin, Provider, say } from '@mesh-adopt/sdk';

/** The `{{module}}` module's adoption rules. */
class {{type}} {
  /** The plan: the provider sequence, nothing adopted. */
  check(ctx) {
    return {
      summary: [`install \`${ctx.module}\` from the catalogue`],
      commands: new Provider(ctx).commands(),
    };
  }

  /** Installs the module by the provider sequence. */
  adopt(ctx) {
    new Provider(ctx).install(() => {});
    const summary = `${ctx.module} installed`;
    say(summary);
    return { summary };
  }
}

export const { init, check, adopt } = exportPlugin(new {{type}}());
