// The catalog service: libraries, the scanner, media items, duplicate content and search.
import { join } from 'node:path';
import { migrate, parkingBus, parkingEndpoints, ParkingLot, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { Ctx, type CatalogOptions } from './handlers/context';
import { endpoints } from './handlers/rpc';
import { consumeIdentity } from './handlers/identity-events';
import { migrations, SCHEMA } from './store/migrations';
import { Scheduler } from './scanner/scheduler';
import { chokidarWatch, type WatchFn } from './scanner/watcher';

export type { CatalogOptions };

/** Where books usually live on a server; never `/`, whose every file a library could then expose. */
export const DEFAULT_LIBRARY_ROOTS = ['/books', '/srv', '/mnt', '/media', '/home'];

export function catalogService(opts: Partial<CatalogOptions> & { watchFn?: WatchFn } = {}): ServiceModule {
  return {
    name: 'catalog',
    async start(rt: Runtime): Promise<RunningService> {
      await migrate(rt.db, SCHEMA, migrations);
      const ctx = new Ctx(rt, {
        roots: opts.roots ?? DEFAULT_LIBRARY_ROOTS,
        coverDir: opts.coverDir ?? join(rt.dataDir, 'covers'),
        watch: opts.watch ?? 'auto',
        reconcileSeconds: opts.reconcileSeconds ?? 900,
        scanOnStartup: opts.scanOnStartup ?? true,
        scanConcurrency: opts.scanConcurrency ?? 4,
        scanBatch: opts.scanBatch ?? 64,
        leaseSeconds: opts.leaseSeconds ?? 30,
      });
      await rt.bus.attachSource(ctx.store);
      const scheduler = new Scheduler(ctx, opts.watchFn ?? chokidarWatch);
      ctx.kick = () => scheduler.kick();
      const parking = new ParkingLot(rt.db, SCHEMA, rt.log);
      rt.metrics.watchParking(parking);
      const identity = await consumeIdentity(ctx, parkingBus(rt.bus, parking), () => scheduler.settingsChanged());
      await rt.bus.serve('catalog', { ...endpoints(ctx), ...parkingEndpoints(parking) });
      scheduler.start();
      let ready = true;
      return {
        name: 'catalog',
        ready: () => ready,
        async stop() {
          ready = false;
          await scheduler.stop();
          await identity.stop();
        },
      };
    },
  };
}
