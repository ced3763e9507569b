// EPUB package documents (OPF, EPUB 2 and 3) to metadata plus where the cover might be.
import { UUID_PATTERN } from '@bindery/contracts';
import { roleOf } from './roles';
import { clean, htmlToText, normalizeIsbn, numberOf, unique, yearOf } from './text';
import { emptyMetadata, type BookMetadata, type Contributor } from './types';
import { attr, child, descendants, elements, markupOf, textOf, type XmlElement } from './xml';
import { dirOf, resolveHref } from './zip-path';

/** An archive path that may hold the cover: an image, or an XHTML page whose first image is the cover. */
export interface CoverCandidate {
  path: string;
  page: boolean;
}

export interface Package {
  metadata: BookMetadata;
  covers: CoverCandidate[];
}

/** container.xml: the first OPF rootfile's full-path. */
export function rootfilePath(container: XmlElement): string | null {
  const rootfiles = descendants(container, 'rootfile').filter((r) => attr(r, 'full-path'));
  const opf = rootfiles.find((r) => attr(r, 'media-type')?.trim() === 'application/oebps-package+xml') ?? rootfiles[0];
  return clean(attr(opf, 'full-path'));
}

interface Refinement {
  property: string;
  scheme: string | null;
  value: string;
}

export function parsePackage(pkg: XmlElement, opfPath: string): Package {
  const meta = child(pkg, 'metadata');
  // OEB 1.x style nests the Dublin Core under dc-metadata / x-metadata.
  const items = [...elements(meta), ...elements(child(meta, 'dc-metadata')), ...elements(child(meta, 'x-metadata'))];
  const refines = refinementsOf(items);
  const named = (name: string): XmlElement[] => items.filter((e) => e.name === name);
  const metaContent = (name: string): string | null =>
    clean(
      attr(
        items.find((e) => e.name === 'meta' && attr(e, 'name')?.trim().toLowerCase() === name),
        'content',
      ),
    );

  const m = emptyMetadata();
  m.title = titleOf(named('title'), refines);
  m.contributors = unique([...people(named('creator'), refines, 'author'), ...people(named('contributor'), refines, 'contributor')], (c) => `${c.role}\u0000${c.name}`);
  Object.assign(m, seriesOf(items, refines, metaContent));
  m.language = firstText(named('language'));
  m.publisher = firstText(named('publisher'));
  const description = named('description')[0];
  m.description = description ? htmlToText(markupOf(description)) : null;
  m.identifiers = identifiersOf(named('identifier'), refines);
  m.isbn = m.identifiers.isbn ?? null;
  m.subjects = unique(
    named('subject')
      .map((s) => clean(textOf(s)))
      .filter((s): s is string => s !== null),
  );
  m.year = yearOf(textOf(publicationDate(named('date'))));
  const direction = attr(child(pkg, 'spine'), 'page-progression-direction')?.trim();
  m.reading_direction = direction === 'rtl' || direction === 'ltr' ? direction : null;
  return { metadata: m, covers: coversOf(pkg, opfPath, metaContent) };
}

function refinementsOf(items: XmlElement[]): Map<string, Refinement[]> {
  const map = new Map<string, Refinement[]>();
  for (const e of items) {
    const target = attr(e, 'refines')?.trim().replace(/^#/u, '');
    const property = attr(e, 'property')?.trim();
    if (e.name !== 'meta' || !target || !property) continue;
    const list = map.get(target) ?? [];
    list.push({ property, scheme: attr(e, 'scheme'), value: clean(textOf(e)) ?? '' });
    map.set(target, list);
  }
  return map;
}

function refined(refines: Map<string, Refinement[]>, el: XmlElement, property: string): Refinement | null {
  const id = attr(el, 'id')?.trim();
  return (id && refines.get(id)?.find((r) => r.property === property)) || null;
}

function firstText(els: XmlElement[]): string | null {
  for (const e of els) {
    const t = clean(textOf(e));
    if (t) return t;
  }
  return null;
}

/** EPUB 3 may mark one title as the main one; otherwise the first title is. */
function titleOf(titles: XmlElement[], refines: Map<string, Refinement[]>): string | null {
  const main = titles.find((t) => refined(refines, t, 'title-type')?.value.toLowerCase() === 'main');
  return (main && clean(textOf(main))) || firstText(titles);
}

function people(els: XmlElement[], refines: Map<string, Refinement[]>, whenMissing: string): Contributor[] {
  const out: Contributor[] = [];
  for (const e of els) {
    const name = clean(textOf(e));
    const role = roleOf(attr(e, 'role') ?? refined(refines, e, 'role')?.value, whenMissing);
    if (name && role) out.push({ name, role });
  }
  return out;
}

function seriesOf(items: XmlElement[], refines: Map<string, Refinement[]>, metaContent: (name: string) => string | null): Pick<BookMetadata, 'series' | 'series_index'> {
  const calibre = metaContent('calibre:series');
  if (calibre) return { series: calibre, series_index: numberOf(metaContent('calibre:series_index')) };
  const collections = items
    .filter((e) => e.name === 'meta' && attr(e, 'property')?.trim() === 'belongs-to-collection' && !attr(e, 'refines'))
    .map((e) => ({ name: clean(textOf(e)), type: refined(refines, e, 'collection-type')?.value.toLowerCase() ?? null, e }))
    .filter((c) => c.name !== null);
  const pick = collections.find((c) => c.type === 'series') ?? collections.find((c) => c.type === null);
  if (!pick) return { series: null, series_index: null };
  return { series: pick.name, series_index: numberOf(refined(refines, pick.e, 'group-position')?.value) };
}

const ONIX_ID_TYPES: Record<string, string> = { '02': 'isbn', '15': 'isbn', '06': 'doi', '13': 'lccn', '22': 'urn' };

function identifiersOf(els: XmlElement[], refines: Map<string, Refinement[]>): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const e of els) {
    let value = clean(textOf(e));
    if (!value) continue;
    let scheme = clean(attr(e, 'scheme'))?.toLowerCase() ?? null;
    const typed = refined(refines, e, 'identifier-type');
    if (!scheme && typed) scheme = ONIX_ID_TYPES[typed.value] ?? (clean(typed.value)?.toLowerCase() || null);
    const prefixed = /^(?:urn:)?(isbn|uuid|doi|issn|calibre|asin|mobi-asin|amazon|google|goodreads)\s*:\s*(.+)$/iu.exec(value);
    // The value's own prefix beats a generic scheme: opf:scheme="URI" on "urn:uuid:…" is a UUID.
    if (prefixed?.[1] && prefixed[2] && (!scheme || scheme === 'uri' || scheme === 'urn' || scheme === prefixed[1].toLowerCase())) {
      scheme = prefixed[1].toLowerCase();
      value = prefixed[2].trim();
    }
    if (!scheme) {
      if (UUID_PATTERN.test(value)) scheme = 'uuid';
      else if (/^97[89]\d{10}$/u.test(value.replace(/[\s-]/gu, ''))) scheme = 'isbn';
      else continue;
    }
    if (scheme === 'isbn') {
      const isbn = normalizeIsbn(value);
      if (!isbn) continue;
      value = isbn;
    }
    if (!(scheme in ids)) ids[scheme] = value;
  }
  return ids;
}

/** EPUB 2 dates carry opf:event; the publication date is the one we want, not modification. */
function publicationDate(dates: XmlElement[]): XmlElement | null {
  const event = (d: XmlElement): string => attr(d, 'event')?.trim().toLowerCase() ?? '';
  return dates.find((d) => ['', 'publication', 'original-publication', 'issued'].includes(event(d))) ?? dates[0] ?? null;
}

const IMAGE_TYPES = /^image\/(jpeg|jpg|png|gif|webp|avif|tiff)$/iu;
const PAGE_TYPES = /^(application\/xhtml\+xml|text\/html|application\/xml|text\/xml)$/iu;

/** In order of trust: EPUB 3 cover-image, EPUB 2 <meta name="cover">, the guide's cover, then any
 * manifest image whose id or href says "cover". */
function coversOf(pkg: XmlElement, opfPath: string, metaContent: (name: string) => string | null): CoverCandidate[] {
  const base = dirOf(opfPath);
  const manifest = elements(child(pkg, 'manifest'), 'item');
  const out: CoverCandidate[] = [];
  const add = (href: string | null, page: boolean): void => {
    const path = href ? resolveHref(base, href) : null;
    if (path && !out.some((c) => c.path === path)) out.push({ path, page });
  };
  const addItem = (item: XmlElement | undefined): void => {
    if (!item) return;
    const type = attr(item, 'media-type')?.trim() ?? '';
    const href = attr(item, 'href');
    if (IMAGE_TYPES.test(type) || (!type && /\.(jpe?g|png|gif|webp)$/iu.test(href ?? ''))) add(href, false);
    else if (PAGE_TYPES.test(type)) add(href, true);
  };

  addItem(manifest.find((i) => (attr(i, 'properties') ?? '').split(/\s+/u).includes('cover-image')));
  const coverId = metaContent('cover');
  if (coverId) addItem(manifest.find((i) => attr(i, 'id')?.trim() === coverId) ?? manifest.find((i) => attr(i, 'href')?.trim() === coverId));
  for (const ref of elements(child(pkg, 'guide'), 'reference')) {
    const type = attr(ref, 'type')?.trim().toLowerCase();
    const href = attr(ref, 'href');
    if (type !== 'cover' && type !== 'other.ms-coverimage-standard' && type !== 'coverimagestandard') continue;
    add(href, !/\.(jpe?g|png|gif|webp|avif)([#?].*)?$/iu.test(href ?? ''));
  }
  for (const item of manifest) {
    const hint = `${attr(item, 'id') ?? ''} ${attr(item, 'href') ?? ''}`.toLowerCase();
    if (hint.includes('cover') && IMAGE_TYPES.test(attr(item, 'media-type')?.trim() ?? '')) addItem(item);
  }
  return out;
}
