// Distributed mode: one service per process, e.g.
//   BINDERY_SERVICES=identity DATABASE_URL=postgres://... NATS_URL=nats://... JWT_SECRET=... pnpm start:service
import { boot } from './boot';

try {
  if (!process.env.DATABASE_URL || !process.env.NATS_URL) throw new Error('invalid configuration: DATABASE_URL and NATS_URL are required for a distributed service');
  const s = await boot();
  console.log(`bindery ${s.services.map((x) => x.name).join(',')} started (${s.mode})${s.url ? ` at ${s.url}` : ''}`);
} catch (e) {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
}
