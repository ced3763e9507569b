// The identity service: accounts, sessions, the login lock, system settings and configuration.
import { migrate, parkingEndpoints, ParkingLot, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { Ctx } from './handlers/context';
import { identityEvents } from './store/projection';
import { endpoints } from './handlers/rpc';
import { migrations, SCHEMA } from './store/migrations';
import { pruneExpired } from './store/sessions';
import { pruneLoginFailures } from './handlers/login-lock';

export interface IdentityOptions {
  /** the default of the `registration_enabled` setting until an admin saves one (off unless the deployment says) */
  publicRegistration?: boolean;
}

export const identityService = (opts: IdentityOptions = {}): ServiceModule => ({
  name: 'identity',
  async start(rt: Runtime): Promise<RunningService> {
    await migrate(rt.db, SCHEMA, migrations);
    const ctx = new Ctx(rt, opts.publicRegistration === undefined ? {} : { registration_enabled: opts.publicRegistration });
    const parking = new ParkingLot(ctx.db, SCHEMA, rt.log);
    rt.metrics.watchParking(parking);
    await rt.bus.attachSource(ctx.store);
    // Other replicas' changes reach this replica's profile cache through identity's own stream.
    const follower = await rt.bus.follow({
      source: 'identity',
      types: ['identity.profile-changed.v1', 'identity.role-changed.v1', 'identity.user-deleted.v1', 'identity.max-devices-changed.v1', 'identity.permissions-changed.v1'],
      handler: async (ev) => {
        const e = identityEvents.decode(ev);
        if (e && 'user_id' in e.data) ctx.profiles.invalidate(e.data.user_id);
      },
    });
    await rt.bus.serve('identity', { ...endpoints(ctx), ...parkingEndpoints(parking) });
    const prune = setInterval(() => void Promise.all([pruneExpired(ctx.db, rt.now()), pruneLoginFailures(ctx)]).catch((e) => rt.log.warn({ err: e }, 'prune failed')), 3600_000);
    prune.unref();
    let ready = true;
    return {
      name: 'identity',
      ready: () => ready,
      async stop() {
        ready = false;
        clearInterval(prune);
        await follower.stop();
      },
    };
  },
});
