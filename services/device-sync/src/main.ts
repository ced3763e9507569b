// The device-sync service: devices and their credentials, pending registrations (shared by the
// replicas, dropped when the service restarts as a whole), shelves (which collections go onto a device) and the sync queue
// (what waits for each device and why), with reactions to identity (limits, deleted accounts) and
// reading (collection members, positions saved elsewhere).
import { migrate, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { DeviceSync } from '@bindery/contracts';
import { Ctx, type DeviceSyncOptions } from './handlers/context';
import { endpoints } from './handlers/rpc';
import { consumeIdentity } from './handlers/identity-events';
import { consumeReading } from './handlers/reading-events';
import { migrations, SCHEMA } from './store/migrations';
import { ReplicaMark } from './store/replicas';

export type { DeviceSyncOptions };

export const DEFAULT_OPTIONS: DeviceSyncOptions = { registrationTtlSeconds: 600, pollIntervalSeconds: 5 };

export function deviceSyncService(opts: DeviceSyncOptions = DEFAULT_OPTIONS): ServiceModule {
  return {
    name: DeviceSync.SERVICE,
    async start(rt: Runtime): Promise<RunningService> {
      await migrate(rt.db, SCHEMA, migrations);
      const ctx = new Ctx(rt, opts);
      const mark = new ReplicaMark(ctx.db, ctx.store);
      const dropped = await mark.start();
      if (dropped) rt.log.info({ dropped }, 'device-sync: pending registrations from before the restart dropped');
      await rt.bus.attachSource(ctx.store);
      const identity = await consumeIdentity(ctx, rt.bus);
      const reading = await consumeReading(ctx, rt.bus);
      await rt.bus.serve(DeviceSync.SERVICE, endpoints(ctx));
      let ready = true;
      return {
        name: DeviceSync.SERVICE,
        ready: () => ready,
        async stop() {
          ready = false;
          await identity.stop();
          await reading.stop();
          await mark.stop().catch(() => undefined);
        },
      };
    },
  };
}
