// CBR: a RAR of page images. node-unrar-js (unrar compiled to wasm) reads the archive from the
// file by positioned reads, so a large CBR is never held in memory; only ComicInfo.xml and the
// cover page are unpacked, into a private temporary folder, each within its byte cap.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { createExtractorFromFile } from 'node-unrar-js';
import { BookError } from './book-error';
import { parseComicInfo } from './comic-info';
import { checkDeclaredPages, comicLayout, isComicInfoName, type DeclaredPage } from './comic';
import { readHead } from './file-bytes';
import { sniffImage } from './images';
import { MAX_ARCHIVE_ENTRIES, MAX_COVER_BYTES, MAX_XML_BYTES } from './limits';
import type { Extracted } from './types';
import { decodeXml } from './xml';

const RAR_MAGIC = 'Rar!\x1a\x07';

type Extractor = Awaited<ReturnType<typeof createExtractorFromFile>>;

export function isRar(head: Uint8Array): boolean {
  return Buffer.from(head.subarray(0, 6)).toString('latin1') === RAR_MAGIC;
}

const slashes = (name: string) => name.replace(/\\/gu, '/');

export async function extractCbr(path: string): Promise<Extracted> {
  const head = await readHead(path, 8, 'CBR');
  if (head.length === 0) throw new BookError('not a valid CBR: empty file');
  if (!isRar(head)) throw new BookError('not a valid CBR: not a RAR archive');
  const out = mkdtempSync(join(tmpdir(), 'bindery-cbr-'));
  // archive names never become paths: the one entry unpacked at a time gets a name of ours
  const target = { name: 'entry' };
  try {
    // loaded on the first CBR, not at every start (its WebAssembly is ~6 MiB in every process)
    const { createExtractorFromFile } = await import('node-unrar-js');
    const rar = await createExtractorFromFile({ filepath: path, targetPath: out, filenameTransform: () => target.name });
    // From here on everything is synchronous: the wasm module is shared, and another CBR opened
    // while this one awaited would take it over.
    const sizes = listFiles(rar);
    const infoName = [...sizes.keys()].find(isComicInfoName);
    const infoBytes = infoName ? extractOne(rar, out, target, infoName, sizes, MAX_XML_BYTES) : null;
    // A broken ComicInfo.xml is ignored (parseComicInfo gives null); the pages still make the book.
    const info = infoBytes ? parseComicInfo(decodeXml(infoBytes)) : null;
    const layout = comicLayout([...sizes.keys()], info);
    let cover: Buffer | null = null;
    for (const name of layout.coverCandidates) {
      const img = extractOne(rar, out, target, name, sizes, MAX_COVER_BYTES);
      if (img && sniffImage(img)) {
        cover = img;
        break;
      }
    }
    return { metadata: layout.metadata, cover, pages: layout.pages };
  } catch (e) {
    if (e instanceof BookError) throw e;
    throw new BookError(`not a valid CBR: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Name to unpacked size of every file; refuses bombs by their declared sizes. The iterator is
 * drained to the end: unrar frees its archive handle only then. */
function listFiles(rar: Extractor): Map<string, number> {
  const sizes = new Map<string, number>();
  const declared: DeclaredPage[] = [];
  let count = 0;
  for (const h of rar.getFileList().fileHeaders) {
    count++;
    if (h.flags.directory || count > MAX_ARCHIVE_ENTRIES) continue;
    const name = slashes(h.name);
    sizes.set(name, h.unpSize);
    declared.push({ name, size: h.unpSize, packed: h.packSize });
  }
  if (count > MAX_ARCHIVE_ENTRIES) throw new BookError(`not a valid CBR: too many entries in archive (${count})`);
  checkDeclaredPages(declared, 'CBR');
  return sizes;
}

/** One file's bytes, or null when it is encrypted, unreadable, or larger than `cap` (declared
 * or unpacked). unrar writes what it unpacks to our temporary folder as it goes, bounded by the
 * declared size, which is checked first. */
function extractOne(rar: Extractor, out: string, target: { name: string }, name: string, sizes: Map<string, number>, cap: number): Buffer | null {
  const size = sizes.get(name);
  if (size === undefined || size > cap) return null;
  target.name = `entry-${Math.random().toString(36).slice(2)}`;
  try {
    let done = false;
    for (const f of rar.extract({ files: (h) => slashes(h.name) === name && !h.flags.encrypted }).files) {
      if (slashes(f.fileHeader.name) === name) done = true;
    }
    if (!done) return null;
    const file = join(out, target.name);
    if (statSync(file).size > cap) return null;
    return readFileSync(file);
  } catch {
    return null;
  }
}
