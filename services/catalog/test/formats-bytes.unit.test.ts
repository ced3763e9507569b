// The scanner hands small EPUB/CBZ files to extract() as bytes it already read: the outcome must
// be exactly what reading the file gives, errors included.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BookError, extract, formatOf, hashBytes, hashFile } from '../src/formats/index';

const SAMPLES = join(import.meta.dirname, '../../../../shared/peers/samples/books');
const zipped = readdirSync(SAMPLES).filter((n) => n.endsWith('.epub') || n.endsWith('.cbz'));

describe('extract from bytes already read', () => {
  it.each(zipped)('%s', async (name) => {
    const path = join(SAMPLES, name);
    const bytes = readFileSync(path);
    expect(hashBytes(bytes)).toEqual(await hashFile(path));
    const fmt = formatOf(name)!;
    const fromFile = await extract(path, fmt).then((x) => ({ ok: x.metadata, cover: x.cover?.length ?? 0 }), (e) => ({ err: (e as Error).message, book: e instanceof BookError }));
    const fromBytes = await extract(path, fmt, { bytes }).then((x) => ({ ok: x.metadata, cover: x.cover?.length ?? 0 }), (e) => ({ err: (e as Error).message, book: e instanceof BookError }));
    expect(fromBytes).toEqual(fromFile);
  });
});
