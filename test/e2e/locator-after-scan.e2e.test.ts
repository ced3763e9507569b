// Locator indexes are built after the scan, beside the covers (services/catalog/src/scanner/indexes.ts):
// the scan itself writes none, and every catalogued EPUB has its index once the pass has run,
// readable and of the current format. Distributed only: the test reads the catalog's tables while
// the catalog runs, which the embedded mode's single PGlite owner does not allow (the on-demand path
// both modes share is exercised by reading-locator.e2e).
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogDb } from '@bindery/catalog';
import { asTables, openPostgres, type NoTables } from '@bindery/platform';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, register } from './helpers';
import { copyOf, createLibrary, FIXTURE, settled } from './catalog-helpers';

const modes = await availableModes();

describe.skipIf(!modes.includes('distributed'))('locator indexes after a scan (distributed)', () => {
  let b: Bindery;
  beforeAll(async () => {
    b = await startBindery('distributed');
  }, 120_000);
  afterAll(async () => {
    await b?.stop();
  });

  it('the background pass gives every catalogued EPUB its index', async () => {
    const call = api(b);
    const admin = await register(call);
    const database = await openPostgres(b.env.DATABASE_URL!);
    try {
      const db = asTables<CatalogDb, NoTables>(database.db);
      const lib = await createLibrary(call, admin.token, { name: 'Indexes', folders: [copyOf(FIXTURE)], watch: false });
      await settled(call, admin.token, lib.id);
      const epubs = await db.withSchema('catalog').selectFrom('media_formats').select('sha256').distinct().where('format', '=', 'epub').where('present', '=', true).execute();
      expect(epubs.length).toBeGreaterThan(10);
      const want = epubs.map((r) => r.sha256!).sort();
      const rows = await eventually(async () => {
        const got = await db.withSchema('catalog').selectFrom('locator_indexes').select(['sha256', 'v', 'data']).execute();
        expect(got.map((r) => r.sha256).sort()).toEqual(want);
        return got;
      }, 90_000);
      for (const r of rows) {
        expect(r.v).toBe(2);
        const index = JSON.parse(gunzipSync(r.data).toString('utf8'));
        expect(index.v).toBe(2);
        expect(index.spine.length, r.sha256).toBeGreaterThan(0);
      }
    } finally {
      await database.close();
    }
  }, 180_000);
});
