// Embedded mode's PGlite is opened with a small shared_buffers (its 128MB default is ~140 MB of an
// idle process's RSS, docs/benchmarks.md "Embedded memory"), and the setting can be raised.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openPGlite, type Database } from '../src/db';

let open: Database | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

const setting = async (d: Database) => (await sql<{ v: string }>`select current_setting('shared_buffers') as v`.execute(d.db)).rows[0]!.v;

describe('PGlite tuning', () => {
  it('opens with shared_buffers 32MB by default', async () => {
    open = await openPGlite('memory://');
    expect(await setting(open)).toBe('32MB');
    // the trigram extension is still there
    expect((await sql<{ s: number }>`select similarity('harbor', 'harbour') as s`.execute(open.db)).rows[0]!.s).toBeGreaterThan(0.3);
  }, 60_000);

  it('takes another size from PGLITE_SHARED_BUFFERS', async () => {
    open = await openPGlite('memory://', { sharedBuffers: '48MB' });
    expect(await setting(open)).toBe('48MB');
  }, 60_000);

  it('makes a new data directory in a child process, complete, and reopens it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'bindery-pglite-'));
    try {
      const dir = join(parent, 'db');
      open = await openPGlite(dir);
      // made beside it and renamed into place: nothing else is left in the parent folder
      expect(readdirSync(parent)).toEqual(['db']);
      expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
      expect(await setting(open)).toBe('32MB');
      await sql`create table t (v text)`.execute(open.db);
      await sql`insert into t values ('kept')`.execute(open.db);
      await open.close();
      open = await openPGlite(dir);
      expect((await sql<{ v: string }>`select v from t`.execute(open.db)).rows).toEqual([{ v: 'kept' }]);
      expect((await sql<{ s: number }>`select similarity('harbor', 'harbour') as s`.execute(open.db)).rows[0]!.s).toBeGreaterThan(0.3);
    } finally {
      await open?.close();
      open = undefined;
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);
});
