// EPUB: container.xml names the package document (OPF), which holds the metadata and says where the cover is.
import { BookError } from './book-error';
import { sniffImage } from './images';
import { isPageName } from './page-order';
import { MAX_COVER_BYTES, MAX_XML_BYTES } from './limits';
import { buildLocatorIndex } from './locator-index';
import { parsePackage, rootfilePath, type CoverCandidate } from './opf';
import type { Extracted } from './types';
import { child, decodeXml, descendants, elements, parseXml, type XmlElement, type XmlNode } from './xml';
import { openZip, type ZipArchive } from './zip';
import { dirOf, resolveHref } from './zip-path';
import type * as Locator from '@bindery/locator';

type LocatorIndex = Locator.LocatorIndex;

export async function extractEpub(path: string, bytes?: Buffer, withLocator = true): Promise<Extracted> {
  const zip = await openZip(path, 'EPUB', bytes);
  try {
    const { pkg, opfPath } = await packageOf(zip);
    const { metadata, covers } = parsePackage(pkg, opfPath);
    // an EPUB of pictures (a comic or manga) has pages like a comic archive: the gateway streams them
    const pages = await imageOnlyPages(zip, pkg, opfPath).catch(() => null);
    if (pages !== null) metadata.page_count = pages.length;
    const cover = await findCover(zip, covers);
    let locator: Extracted['locator'] = null;
    try {
      if (withLocator) locator = await buildLocatorIndex(zip, pkg, opfPath);
    } catch {
      // positions in this book keep their percentage; the book itself is fine
    }
    return { metadata, cover, locator, pages };
  } finally {
    zip.close();
  }
}

/** The body text of every spine item, in spine order (what locator offsets count), with the index. */
export async function epubText(path: string, bytes?: Buffer): Promise<{ index: LocatorIndex; texts: string[] }> {
  const zip = await openZip(path, 'EPUB', bytes);
  try {
    const { pkg, opfPath } = await packageOf(zip);
    const texts: string[] = [];
    const index = await buildLocatorIndex(zip, pkg, opfPath, texts);
    return { index, texts };
  } finally {
    zip.close();
  }
}

/** The locator index alone (what the background pass and a late request build). */
export async function epubLocatorIndex(path: string, bytes?: Buffer): Promise<LocatorIndex> {
  const zip = await openZip(path, 'EPUB', bytes);
  try {
    const { pkg, opfPath } = await packageOf(zip);
    return await buildLocatorIndex(zip, pkg, opfPath);
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

/** Spine documents read at most (a page of a picture book is a few hundred bytes). */
const MAX_PAGE_DOC_BYTES = 512 * 1024;
const MAX_SPINE = 5000;

/**
 * The pages of an image-only EPUB, as archive entry names in reading order: every linear spine
 * item is a page image of the book, or an (X)HTML document without text holding exactly one <img>
 * or SVG <image> of the book. Null for any EPUB with text; reading stops at the first page with
 * text. This is the only place the rule lives: the list travels in the catalog's events and the
 * gateway streams exactly these entries (docs/decisions.md, "One page list").
 */
async function imageOnlyPages(zip: ZipArchive, pkg: XmlElement, opfPath: string): Promise<string[] | null> {
  const base = dirOf(opfPath);
  const manifest = new Map<string, { href: string | null; type: string }>();
  for (const item of elements(child(pkg, 'manifest'), 'item')) {
    if (item.attrs.id) manifest.set(item.attrs.id, { href: item.attrs.href ? resolveHref(base, item.attrs.href) : null, type: (item.attrs['media-type'] ?? '').toLowerCase() });
  }
  const spine = elements(child(pkg, 'spine'), 'itemref').filter((r) => r.attrs.linear !== 'no');
  if (spine.length === 0 || spine.length > MAX_SPINE) return null;
  const pages: string[] = [];
  for (const ref of spine) {
    const item = manifest.get(ref.attrs.idref ?? '');
    if (!item?.href) return null;
    if (item.type.startsWith('image/')) {
      const image = zip.find(item.href);
      if (!image || !isPageName(image.fileName)) return null;
      pages.push(image.fileName);
      continue;
    }
    const entry = zip.find(item.href);
    if (!entry) return null;
    const doc = parseXml(decodeXml(await zip.read(entry, MAX_PAGE_DOC_BYTES)));
    const body = descendants(doc, 'body')[0] ?? doc;
    if (hasText(body)) return null;
    const refs = [...descendants(body, 'img').map((i) => i.attrs.src), ...descendants(body, 'image').map((i) => i.attrs.href)];
    if (refs.length !== 1 || !refs[0]) return null;
    const img = resolveHref(dirOf(entry.fileName), refs[0]);
    const image = img ? zip.find(img) : null;
    if (!image || !isPageName(image.fileName)) return null;
    pages.push(image.fileName);
  }
  return pages;
}

const SILENT = new Set(['script', 'style', 'title']);
function hasText(el: XmlElement | null): boolean {
  return (el?.children ?? []).some((c: XmlNode) => (typeof c === 'string' ? c.trim() !== '' : !SILENT.has(c.name) && hasText(c)));
}
