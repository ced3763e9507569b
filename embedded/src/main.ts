// `pnpm start`: every service in one process. Embedded (PGlite under DATA_DIR, in-memory bus)
// unless DATABASE_URL and NATS_URL are set.
import { ConfigError } from '@bindery/platform';
import { boot } from './boot';

// files this process creates (the embedded database under DATA_DIR above all) are its user's alone
process.umask(0o077);
try {
  const s = await boot();
  const shown = (s.url ?? '').replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  console.log(`
Bindery is running at ${shown} (${s.mode} mode)

Open ${shown} in a browser: the first visit creates the administrator account.
Or create it with curl:
  curl -X POST ${shown}/api/auth/register -H 'Content-Type: application/json' \\
       -d '{"email":"you@example.com","username":"admin","password":"choose-a-passw0rd"}'
Setup status: ${shown}/api/setup/status
`);
} catch (e) {
  console.error(e instanceof ConfigError || (e instanceof Error && e.message.startsWith('invalid configuration')) ? e.message : e);
  process.exit(1);
}
