// The `postgres` module adopts the store genesis raised, in place.
//
// The node-engine keys containers on their name and compares a spec digest, so the module's
// server container must carry the store's name and the very image the foundation runs:
// anything else would replace the mesh's memory instead of adopting it. The superuser the
// store was created with is carried in before the push, or the push would seal random bytes
// where a working password has to be.

import { adoptInPlace, exportPlugin, Handover, Provider, say } from '@mesh-adopt/sdk';

/** The bundle's identity for the store. */
const STORE_ID = 'store';
/** What a store on another image would do, and what to do instead. */
const OTHER_IMAGE =
  "a different one would tear the mesh's store down and raise a new one on its data. " +
  'Pin both to one postgres image';
/** The module secret the superuser is delivered as. */
const SUPERUSER_SECRET = 'superuser';
/** The genesis credential holding the store's superuser password. */
const SUPERUSER_CREDENTIAL = 'store-superuser';
const SUPERUSER_WHAT = "the store's superuser";
const BUILD_NOTE = '(the provisioner; the server is adopted, not built)';

/** The store, once the module's manifest is known to adopt it. */
function adoptableStore(ctx) {
  return adoptInPlace(ctx, STORE_ID, 'store', OTHER_IMAGE);
}

/** The superuser genesis made, handed to the module before its push. */
function superuser(ctx) {
  return new Handover(ctx, SUPERUSER_SECRET, SUPERUSER_CREDENTIAL, SUPERUSER_WHAT);
}

/** The postgres module's adoption rules. */
class Postgres {
  /** Adopts the store in place and hands the superuser over, or refuses before anything happens. */
  check(ctx) {
    const store = adoptableStore(ctx);
    const handover = superuser(ctx);
    handover.check();
    return {
      summary: [`adopt \`${store.name}\` (${store.image}) in place: kept, not recreated`, handover.summary()],
      commands: new Provider(ctx, BUILD_NOTE).commands([handover.command()]),
    };
  }

  /** Installs the provisioner around the store genesis raised, carrying the superuser in. */
  adopt(ctx) {
    const store = adoptableStore(ctx);
    say(`adopting ${store.name}: the store genesis raised, unchanged`);
    new Provider(ctx, BUILD_NOTE).install(() => superuser(ctx).deliver());
    const summary = `${store.name} is now the ${ctx.module} module's store, kept in place`;
    say(`adopted ${summary}`);
    return { summary };
  }
}

export const { init, check, adopt } = exportPlugin(new Postgres());
