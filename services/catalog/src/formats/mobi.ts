// MOBI and AZW3 (PalmDB containers): the header, the record list and record 0 are read with
// positioned reads, then at most one more record for the cover. The text is never decompressed.
import type { FileHandle } from 'node:fs/promises';
import { BookError } from './book-error';
import { readAt, withFile } from './file-bytes';
import { sniffImage } from './images';
import { MAX_COVER_BYTES, MAX_MOBI_HEADER_RECORD_BYTES } from './limits';
import { parseRecord0 } from './mobi-header';
import { emptyMetadata, type Extracted } from './types';

const PDB_HEADER = 78;

export function extractMobi(path: string, label: 'MOBI' | 'AZW3'): Promise<Extracted> {
  return withFile(path, label, async (fh) => {
    const { size } = await fh.stat();
    const header = await readExactly(fh, 0, PDB_HEADER, label);
    const kind = header.toString('latin1', 60, 68);
    if (kind !== 'BOOKMOBI' && kind !== 'TEXtREAd') throw new BookError(`not a valid ${label}: not a Mobipocket file`);
    const pdbName = header.toString('latin1', 0, 32).replace(/\0.*$/su, '');
    const count = header.readUInt16BE(76);
    if (count === 0) throw new BookError(`not a valid ${label}: no records`);
    const list = await readExactly(fh, PDB_HEADER, count * 8, label);
    const offsets = Array.from({ length: count }, (_, i) => list.readUInt32BE(i * 8));
    const end = (i: number): number => (i + 1 < count ? (offsets[i + 1] as number) : size);
    const ok = offsets.every((o, i) => o >= PDB_HEADER + count * 8 && o <= size && end(i) >= o);
    if (!ok) throw new BookError(`not a valid ${label}: broken record list`);

    const start0 = offsets[0] as number;
    const record0 = await readExactly(fh, start0, Math.min(end(0) - start0, MAX_MOBI_HEADER_RECORD_BYTES), label);
    if (kind === 'TEXtREAd' && record0.toString('latin1', 16, 20) !== 'MOBI') {
      // Plain PalmDOC: no metadata beyond the database name.
      const metadata = emptyMetadata();
      metadata.title = pdbName.replace(/_/gu, ' ').trim() || null;
      return { metadata, cover: null };
    }
    const { metadata, coverRecord } = parseRecord0(record0, pdbName, label);
    let cover: Buffer | null = null;
    if (coverRecord !== null && coverRecord > 0 && coverRecord < count) {
      const at = offsets[coverRecord] as number;
      const length = end(coverRecord) - at;
      if (length > 0 && length <= MAX_COVER_BYTES) {
        const bytes = await readExactly(fh, at, length, label);
        const image = sniffImage(bytes);
        if (image === 'jpeg' || image === 'png' || image === 'gif') cover = bytes;
      }
    }
    return { metadata, cover };
  });
}

async function readExactly(fh: FileHandle, position: number, length: number, label: string): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  if ((await readAt(fh, buf, position)) !== length) throw new BookError(`not a valid ${label}: truncated`);
  return buf;
}
