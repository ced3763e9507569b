// What each runtime dependency adds to an idle process (docs/benchmarks.md, "Embedded memory"):
//   node --expose-gc embedded/module-rss.mjs fastify kysely @nats-io/transport-node sharp pglite
// `pglite` opens PGlite (with pg_trgm) in PGDIR (default: a fresh temp dir), PGLITE_SHARED_BUFFERS as in boot.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mb = () => {
  globalThis.gc?.();
  return Math.round(process.memoryUsage().rss / 1048576);
};
let last = mb();
console.log(`node alone: ${last} MB`);
const keep = [];
for (const m of process.argv.slice(2)) {
  const t = performance.now();
  if (m === 'pglite') {
    const { PGlite } = await import('@electric-sql/pglite');
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    const buffers = process.env.PGLITE_SHARED_BUFFERS;
    const startParams = buffers ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${buffers}`] : undefined;
    const dir = process.env.PGDIR ?? join(mkdtempSync(join(tmpdir(), 'bindery-rss-')), 'db');
    const lite = await PGlite.create(dir, { extensions: { pg_trgm }, ...(startParams ? { startParams } : {}) });
    await lite.exec('create extension if not exists pg_trgm');
    keep.push(lite);
  } else keep.push(await import(m));
  const now = mb();
  console.log(`${m}: +${now - last} MB in ${Math.round(performance.now() - t)} ms (total ${now} MB)`);
  last = now;
}
process.exit(0);
