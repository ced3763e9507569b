// EPUB: container.xml names the package document (OPF), which holds the metadata and says where the cover is.
import { BookError } from './book-error';
import { sniffImage } from './images';
import { MAX_COVER_BYTES, MAX_XML_BYTES } from './limits';
import { buildLocatorIndex } from './locator-index';
import { parsePackage, rootfilePath, type CoverCandidate } from './opf';
import type { Reading } from '@bindery/contracts';
import type { Extracted } from './types';

type LocatorIndex = Reading.Locator.LocatorIndex;
import { decodeXml, elements, parseXml, type XmlElement } from './xml';
import { openZip, type ZipArchive } from './zip';
import { dirOf, resolveHref } from './zip-path';

export async function extractEpub(path: string, bytes?: Buffer): Promise<Extracted> {
  const zip = await openZip(path, 'EPUB', bytes);
  try {
    const { pkg, opfPath } = await packageOf(zip);
    const { metadata, covers } = parsePackage(pkg, opfPath);
    const cover = await findCover(zip, covers);
    let locator: Extracted['locator'] = null;
    try {
      locator = await buildLocatorIndex(zip, pkg, opfPath);
    } catch {
      // positions in this book keep their percentage; the book itself is fine
    }
    return { metadata, cover, locator };
  } finally {
    zip.close();
  }
}

/** The body text of every spine item, in spine order (what locator offsets count), with the index. */
export async function epubText(path: string): Promise<{ index: LocatorIndex; texts: string[] }> {
  const zip = await openZip(path, 'EPUB');
  try {
    const { pkg, opfPath } = await packageOf(zip);
    const texts: string[] = [];
    const index = await buildLocatorIndex(zip, pkg, opfPath, texts);
    return { index, texts };
  } finally {
    zip.close();
  }
}

/** container.xml names the package document (OPF). */
async function packageOf(zip: ZipArchive): Promise<{ pkg: XmlElement; opfPath: string }> {
  const containerEntry = zip.find('META-INF/container.xml');
  if (!containerEntry) throw new BookError('not a valid EPUB: missing META-INF/container.xml');
  const container = xmlDocument(await zip.read(containerEntry, MAX_XML_BYTES), 'container.xml');
  const opfPath = container && rootfilePath(container);
  if (!opfPath) throw new BookError('not a valid EPUB: container.xml names no package document');
  const opfEntry = zip.find(opfPath) ?? zip.find(resolveHref('', opfPath) ?? opfPath);
  if (!opfEntry) throw new BookError(`not a valid EPUB: missing ${opfPath}`);
  const pkg = xmlDocument(await zip.read(opfEntry, MAX_XML_BYTES), opfPath);
  if (pkg?.name !== 'package') throw new BookError(`not a valid EPUB: ${opfPath} is not a package document`);
  return { pkg, opfPath: opfEntry.fileName };
}

function xmlDocument(bytes: Buffer, what: string): XmlElement | null {
  try {
    return parseXml(decodeXml(bytes));
  } catch (e) {
    throw new BookError(`not a valid EPUB: unreadable ${what}`, { cause: e });
  }
}

/** The first candidate that yields real image bytes. A missing or broken cover never fails the book. */
async function findCover(zip: ZipArchive, candidates: CoverCandidate[]): Promise<Buffer | null> {
  for (const c of candidates) {
    try {
      const path = c.page ? await imageOnPage(zip, c.path) : c.path;
      const entry = path ? zip.find(path) : null;
      if (!entry) continue;
      const bytes = await zip.read(entry, MAX_COVER_BYTES);
      if (sniffImage(bytes)) return bytes;
    } catch {
      // Try the next candidate.
    }
  }
  return null;
}

/** The first <img src> or SVG <image href> on an XHTML cover page, as an archive path. */
async function imageOnPage(zip: ZipArchive, pagePath: string): Promise<string | null> {
  const entry = zip.find(pagePath);
  if (!entry) return null;
  const page = parseXml(decodeXml(await zip.read(entry, MAX_XML_BYTES)));
  const src = firstImageRef(page);
  return src ? resolveHref(dirOf(entry.fileName), src) : null;
}

function firstImageRef(el: XmlElement | null): string | null {
  for (const c of elements(el)) {
    const ref = c.name === 'img' ? c.attrs.src : c.name === 'image' ? c.attrs.href : undefined;
    if (ref) return ref;
    const inner = firstImageRef(c);
    if (inner) return inner;
  }
  return null;
}
