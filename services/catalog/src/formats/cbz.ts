// CBZ: a zip of page images, perhaps with a ComicInfo.xml at its root.
import { parseComicInfo, type ComicInfo } from './comic-info';
import { ArchiveLimitError } from './book-error';
import { checkDeclaredPages, comicLayout, isComicInfoName } from './comic';
import { sniffImage } from './images';
import { MAX_COVER_BYTES, MAX_XML_BYTES } from './limits';
import type { Extracted } from './types';
import { decodeXml } from './xml';
import { openZip, type ZipArchive } from './zip';

export async function extractCbz(path: string, bytes?: Buffer): Promise<Extracted> {
  const zip = await openZip(path, 'CBZ', bytes);
  try {
    checkDeclaredPages(
      zip.entries.map((e) => ({ name: e.fileName, size: e.uncompressedSize, packed: e.compressedSize })),
      'CBZ',
    );
    const layout = comicLayout(
      zip.entries.map((e) => e.fileName),
      await comicInfo(zip),
    );
    let cover: Buffer | null = null;
    for (const name of layout.coverCandidates) {
      cover = await readImage(zip, name);
      if (cover) break;
    }
    return { metadata: layout.metadata, cover, pages: layout.pages };
  } finally {
    zip.close();
  }
}

async function comicInfo(zip: ZipArchive): Promise<ComicInfo | null> {
  const entry = zip.entries.find((e) => isComicInfoName(e.fileName));
  if (!entry) return null;
  try {
    return parseComicInfo(decodeXml(await zip.read(entry, MAX_XML_BYTES)));
  } catch (e) {
    if (e instanceof ArchiveLimitError) throw e;
    return null; // Unreadable ComicInfo: the pages alone still make the book.
  }
}

async function readImage(zip: ZipArchive, name: string): Promise<Buffer | null> {
  const entry = zip.find(name);
  if (!entry) return null;
  try {
    const bytes = await zip.read(entry, MAX_COVER_BYTES);
    return sniffImage(bytes) ? bytes : null;
  } catch (e) {
    // a page that is merely broken costs the cover; one that breaks our bounds fails the book
    if (e instanceof ArchiveLimitError) throw e;
    return null;
  }
}
