// The `mesh-vault` module: nothing to adopt and nothing to carry in. It is installed by the
// plain provider sequence and from its first push keeps the export of every operator-sealed
// secret on its own disk.

import { exportPlugin, Provider, say } from '@mesh-adopt/sdk';

/** The mesh-vault module's adoption rules. */
class MeshVault {
  /** The plain provider sequence; nothing is adopted. */
  check(ctx) {
    return {
      summary: [`install \`${ctx.module}\` from the catalogue; nothing adopted`],
      commands: new Provider(ctx).commands(),
    };
  }

  /** Installs the module; its export of sealed secrets lives on the node from the first push. */
  adopt(ctx) {
    new Provider(ctx).install();
    const summary = `${ctx.module} installed: the operator-sealed export lives on this node, outside the store`;
    say(summary);
    return { summary };
  }
}

export const { init, check, adopt } = exportPlugin(new MeshVault());
