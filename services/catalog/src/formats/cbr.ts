// CBR: a RAR of page images. node-unrar-js (unrar compiled to wasm) works on bytes in memory, so
// the file is read whole (bounded) and only ComicInfo.xml and the cover page are extracted.
import { createExtractorFromData, type Extractor } from 'node-unrar-js';
import { BookError } from './book-error';
import { parseComicInfo } from './comic-info';
import { checkDeclaredPages, comicLayout, isComicInfoName, type DeclaredPage } from './comic';
import { readWholeFile } from './file-bytes';
import { sniffImage } from './images';
import { MAX_ARCHIVE_ENTRIES, MAX_BUFFERED_BOOK_BYTES, MAX_COVER_BYTES, MAX_XML_BYTES } from './limits';
import type { Extracted } from './types';
import { decodeXml } from './xml';

const RAR_MAGIC = 'Rar!\x1a\x07';

export function isRar(head: Uint8Array): boolean {
  return Buffer.from(head.subarray(0, 6)).toString('latin1') === RAR_MAGIC;
}

export async function extractCbr(path: string): Promise<Extracted> {
  const bytes = await readWholeFile(path, MAX_BUFFERED_BOOK_BYTES, 'CBR');
  if (!isRar(bytes)) throw new BookError('not a valid CBR: not a RAR archive');
  try {
    const rar = await createExtractorFromData({ data: bytes.buffer as ArrayBuffer });
    const sizes = listFiles(rar);
    const infoName = [...sizes.keys()].find(isComicInfoName);
    const infoBytes = infoName ? extractOne(rar, infoName, sizes, MAX_XML_BYTES) : null;
    // A broken ComicInfo.xml is ignored (parseComicInfo gives null); the pages still make the book.
    const info = infoBytes ? parseComicInfo(decodeXml(infoBytes)) : null;
    const layout = comicLayout([...sizes.keys()], info);
    let cover: Buffer | null = null;
    for (const name of layout.coverCandidates) {
      const img = extractOne(rar, name, sizes, MAX_COVER_BYTES);
      if (img && sniffImage(img)) {
        cover = Buffer.from(img);
        break;
      }
    }
    return { metadata: layout.metadata, cover };
  } catch (e) {
    if (e instanceof BookError) throw e;
    throw new BookError(`not a valid CBR: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/** Name to unpacked size of every file. The iterator is drained to the end: unrar frees its
 * archive handle only then. */
function listFiles(rar: Extractor<Uint8Array>): Map<string, number> {
  const sizes = new Map<string, number>();
  const declared: DeclaredPage[] = [];
  let count = 0;
  for (const h of rar.getFileList().fileHeaders) {
    count++;
    if (h.flags.directory || count > MAX_ARCHIVE_ENTRIES) continue;
    const name = h.name.replace(/\\/gu, '/');
    sizes.set(name, h.unpSize);
    declared.push({ name, size: h.unpSize, packed: h.packSize });
  }
  if (count > MAX_ARCHIVE_ENTRIES) throw new BookError(`not a valid CBR: too many entries in archive (${count})`);
  checkDeclaredPages(declared, 'CBR');
  return sizes;
}

/** One file's bytes, or null when it is encrypted, unreadable or declared larger than `cap`.
 * unrar writes into memory as it goes and cannot be stopped part-way, so the declared size is
 * all we can check before extracting; the wasm heap is itself bounded. */
function extractOne(rar: Extractor<Uint8Array>, name: string, sizes: Map<string, number>, cap: number): Uint8Array | null {
  const size = sizes.get(name);
  if (size === undefined || size > cap) return null;
  let out: Uint8Array | null = null;
  try {
    for (const f of rar.extract({ files: (h) => h.name.replace(/\\/gu, '/') === name && !h.flags.encrypted }).files) {
      if (!out && f.extraction && f.extraction.length <= cap) out = f.extraction;
    }
  } catch {
    return null;
  }
  return out;
}
