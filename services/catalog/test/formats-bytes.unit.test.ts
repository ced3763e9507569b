// The scanner hands small EPUB/CBZ files to extract() as bytes it already read: the outcome must
// be exactly what reading the file gives, errors included.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BookError, extract, formatOf, hashBytes, hashFile } from '../src/formats/index';

// ../shared sits next to the repository: resolved from the repo root; its tests skip when it is absent.
const REPO = join(import.meta.dirname, '../../..');
const SAMPLES = join(REPO, '../shared/peers/samples/books');
const HAVE_SAMPLES = existsSync(SAMPLES);
if (!HAVE_SAMPLES) console.warn(`skipped: formats-bytes needs ${SAMPLES}, which is absent`);
const zipped = (HAVE_SAMPLES ? readdirSync(SAMPLES) : []).filter((n) => n.endsWith('.epub') || n.endsWith('.cbz'));

describe.skipIf(!HAVE_SAMPLES)('extract from bytes already read (../shared/peers/samples)', () => {
  it.each(zipped)('%s', async (name) => {
    const path = join(SAMPLES, name);
    const bytes = readFileSync(path);
    expect(hashBytes(bytes)).toEqual(await hashFile(path));
    const fmt = formatOf(name)!;
    const fromFile = await extract(path, fmt).then(
      (x) => ({ ok: x.metadata, cover: x.cover?.length ?? 0 }),
      (e) => ({ err: (e as Error).message, book: e instanceof BookError }),
    );
    const fromBytes = await extract(path, fmt, { bytes }).then(
      (x) => ({ ok: x.metadata, cover: x.cover?.length ?? 0 }),
      (e) => ({ err: (e as Error).message, book: e instanceof BookError }),
    );
    expect(fromBytes).toEqual(fromFile);
  });
});
