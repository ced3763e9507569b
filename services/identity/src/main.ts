// The identity service: accounts, sessions, the login lock, system settings and configuration.
import { migrate, type RunningService, type Runtime, type ServiceModule } from '@bindery/platform';
import { Ctx } from './handlers/context';
import { endpoints } from './handlers/rpc';
import { migrations, SCHEMA } from './store/migrations';
import { pruneExpired } from './store/sessions';

export const identityService: ServiceModule = {
  name: 'identity',
  async start(rt: Runtime): Promise<RunningService> {
    await migrate(rt.db, SCHEMA, migrations);
    const ctx = new Ctx(rt);
    await rt.bus.attachSource(ctx.store);
    await rt.bus.serve('identity', endpoints(ctx));
    const prune = setInterval(() => void pruneExpired(rt.db, rt.now()).catch((e) => rt.log.warn({ err: e }, 'refresh token prune failed')), 3600_000);
    prune.unref();
    let ready = true;
    return {
      name: 'identity',
      ready: () => ready,
      async stop() {
        ready = false;
        clearInterval(prune);
      },
    };
  },
};
