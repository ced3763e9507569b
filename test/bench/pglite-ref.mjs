// A reference for the embedded write figures: what this machine's PGlite takes for the simplest
// statements (a one-row insert with a UUID and a small jsonb, a primary-key select), in a data
// directory under the OS temp dir, three rounds of 2,000 each. Run: node test/bench/pglite-ref.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(join(import.meta.dirname, '../../platform/package.json'));
const { PGlite } = await import(require.resolve('@electric-sql/pglite'));
const dir = mkdtempSync(join(tmpdir(), 'bindery-pglite-ref-'));
try {
  const db = await PGlite.create(dir);
  await db.exec('create table t (id serial primary key, a uuid not null, b jsonb not null)');
  const N = 2000;
  for (let round = 1; round <= 3; round++) {
    let t = performance.now();
    for (let i = 0; i < N; i++) await db.query('insert into t (a, b) values ($1, $2)', [crypto.randomUUID(), JSON.stringify({ i })]);
    const insert = (performance.now() - t) / N;
    t = performance.now();
    for (let i = 0; i < N; i++) await db.query('select * from t where id = $1', [i + 1]);
    const select = (performance.now() - t) / N;
    console.log(`round ${round}: one-row insert ${insert.toFixed(3)} ms, primary-key select ${select.toFixed(3)} ms`);
  }
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
