import { existsSync, mkdtempSync, rmSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashFile } from '../src/formats';

// ../shared sits next to the repository: resolved from the repo root; its tests skip when it is absent.
const REPO = join(import.meta.dirname, '../../..');
const SAMPLES = join(REPO, '../shared/peers/samples');
const BOOKS = join(SAMPLES, 'books');
const HAVE_SAMPLES = existsSync(join(SAMPLES, 'koreader-partial-md5.tsv'));
if (!HAVE_SAMPLES) console.warn(`skipped: formats-hash needs ${BOOKS}, which is absent`);

interface Row {
  set: string;
  path: string;
  size: number;
  sha256: string;
  partial_md5: string;
}

const rows: Row[] = (HAVE_SAMPLES ? readFileSync(join(SAMPLES, 'koreader-partial-md5.tsv'), 'utf8') : '')
  .split('\n')
  .slice(1)
  .filter((l) => l.trim() !== '')
  .map((l) => {
    const [set, path, size, sha256, partial_md5] = l.split('\t') as [string, string, string, string, string];
    return { set, path, size: Number(size), sha256, partial_md5 };
  });

/** The sample names in the TSV may be NFC while the files on disk are NFD. */
function onDisk(name: string): string {
  const hit = readdirSync(BOOKS).find((f) => f.normalize('NFC') === name.normalize('NFC'));
  if (!hit) throw new Error(`sample missing: ${name}`);
  return join(BOOKS, hit);
}

const tmp = mkdtempSync(join(tmpdir(), 'bindery-hash-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function pattern(size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + 7) & 0xff;
  return b;
}

describe.skipIf(!HAVE_SAMPLES)('hashFile against the KOReader golden values (../shared/peers/samples)', () => {
  it('has both sets', () => {
    expect(rows.filter((r) => r.set === 'samples').length).toBe(16);
    expect(rows.filter((r) => r.set === 'synthetic').length).toBe(18);
  });

  for (const row of rows.filter((r) => r.set === 'samples')) {
    it(`samples: ${row.path}`, async () => {
      expect(await hashFile(onDisk(row.path))).toEqual({ sha256: row.sha256, partial_md5: row.partial_md5, size: row.size });
    });
  }

  for (const row of rows.filter((r) => r.set === 'synthetic')) {
    it(`synthetic: ${row.path}`, async () => {
      const file = join(tmp, row.path);
      writeFileSync(file, pattern(row.size));
      expect(await hashFile(file)).toEqual({ sha256: row.sha256, partial_md5: row.partial_md5, size: row.size });
      rmSync(file);
    });
  }

  it('a missing file is an ordinary ENOENT', async () => {
    await expect(hashFile(join(tmp, 'nope.epub'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
