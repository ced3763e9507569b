// Embedded mode's PGlite is opened with a small shared_buffers (its 128MB default is ~140 MB of an
// idle process's RSS, docs/benchmarks.md "Embedded memory"), and the setting can be raised.
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
});
