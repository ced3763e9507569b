// The reading service: each user's positions, annotations, ratings, collections, saved filters and
// dashboard preferences, with reactions to identity (new and deleted accounts) and the catalog
// (item facts, merges of duplicate items, books found again by hash).
import { migrate, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { Ctx } from './handlers/context';
import { endpoints } from './handlers/rpc';
import { consumeAccess, consumeIdentity } from './handlers/identity-events';
import { consumeCatalog } from './handlers/catalog-events';
import { migrations, SCHEMA } from './store/migrations';

export const readingService: ServiceModule = {
  name: 'reading',
  async start(rt: Runtime): Promise<RunningService> {
    await migrate(rt.db, SCHEMA, migrations);
    const ctx = new Ctx(rt);
    await rt.bus.attachSource(ctx.store);
    const identity = await consumeIdentity(ctx, rt.bus);
    const access = await consumeAccess(ctx, rt.bus);
    const catalog = await consumeCatalog(ctx, rt.bus);
    const itemChanges = await ctx.listenForItemChanges();
    await rt.bus.serve('reading', endpoints(ctx));
    let ready = true;
    return {
      name: 'reading',
      ready: () => ready,
      async stop() {
        ready = false;
        await identity.stop();
        await access.stop();
        await catalog.stop();
        await itemChanges?.stop();
      },
    };
  },
};
