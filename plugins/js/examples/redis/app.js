// The `redis` module adopts the cache genesis raised, in place, and hands the cache's
// password over as its own secret before the push.

import { adoptInPlace, exportPlugin, Handover, Provider, Reads, say, waitForImage } from '@mesh-adopt/sdk';

const BUILD_NOTE = '(the server is adopted, not built)';

/** The bundle's `cache`, once the manifest declares a container of its name and image. */
function cache(ctx) {
  const otherImage =
    'a different one would replace the running server and raise a new one on its data. Pin both to one image';
  return adoptInPlace(ctx, 'cache', 'cache', otherImage);
}

/** Genesis credential `cache-password`, handed over as the module's secret `password`. */
function password(ctx) {
  return new Handover(ctx, 'password', 'cache-password', "the cache's password");
}

class Redis {
  check(ctx) {
    const server = cache(ctx);
    new Reads().inspect(server.name).check(ctx);
    const handover = password(ctx);
    handover.check();
    return {
      summary: [`adopt \`${server.name}\` (${server.image}) in place: kept, not recreated`, handover.summary()],
      commands: new Provider(ctx, BUILD_NOTE).commands([handover.command()]),
    };
  }

  adopt(ctx) {
    const server = cache(ctx);
    say(`adopting ${server.name}: the cache genesis raised, unchanged`);
    new Provider(ctx, BUILD_NOTE).install(() => password(ctx).deliver());
    // Milliseconds here; the context's wait is in seconds.
    waitForImage(server.name, server.image, ctx.options.waitSeconds * 1000, 2000);
    const summary = `${server.name} is now the ${ctx.module} module's cache, kept in place`;
    say(`adopted ${summary}`);
    return { summary };
  }
}

export const { init, check, adopt } = exportPlugin(new Redis());
