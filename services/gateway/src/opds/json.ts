// OPDS 2.0 documents (application/opds+json): feeds with navigation, publications, groups and
// facets, publications, and the Divina page-list manifest of a streamed book. Paths are those of
// OPDS 1.2 under `<base>/v2` (docs/decisions.md, "OPDS 2.0 and page streaming").
import { ENGLISH, type OpdsWords } from './words';
import type { Catalog } from '@bindery/contracts';
import { mimeOf } from '../files/mime';
import { encodePath, plainText, pseTemplate, REL, segment } from './atom';
import { lastPage } from './paging';
import type { StreamInfo } from './streams';

export const TYPE2 = {
  feed: 'application/opds+json',
  publication: 'application/opds-publication+json',
  divina: 'application/divina+json',
};
export const V2 = '/v2';
const ACQUISITION = 'http://opds-spec.org/acquisition';
/** a BCP 47 tag as the schema takes it (simplified: language with optional subtags) */
const BCP47 = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/u;

export interface Link2 {
  href: string;
  type?: string;
  rel?: string;
  title?: string;
  templated?: boolean;
  properties?: Record<string, unknown>;
}

export interface Paging2 {
  page: number;
  perPage: number;
  total: number;
  /** the feed's path with its other query parameters, without page and per_page */
  path: string;
  query: Record<string, string>;
}

export interface Feed2Head {
  title: string;
  base: string;
  self: string;
  up?: string;
  modified?: string;
  paging?: Paging2;
}

export interface Group2 {
  title: string;
  href: string;
  publications: object[];
}

const withQuery = (path: string, q: Record<string, string>) => {
  const s = new URLSearchParams(q).toString();
  return s ? `${path}?${s}` : path;
};

function headLinks(h: Feed2Head): Link2[] {
  const links: Link2[] = [
    { rel: 'self', href: h.self, type: TYPE2.feed },
    { rel: 'start', href: `${h.base}${V2}`, type: TYPE2.feed },
  ];
  if (h.up) links.push({ rel: 'up', href: h.up, type: TYPE2.feed });
  links.push({ rel: 'search', href: `${h.base}${V2}/search{?query}`, type: TYPE2.feed, templated: true });
  const p = h.paging;
  if (p) {
    const last = lastPage(p.total, p.perPage);
    const at = (page: number) => withQuery(p.path, { ...p.query, page: String(page), per_page: String(p.perPage) });
    links.push({ rel: 'first', href: at(1), type: TYPE2.feed }, { rel: 'last', href: at(last), type: TYPE2.feed });
    if (p.page > 1) links.push({ rel: 'previous', href: at(Math.min(p.page - 1, last)), type: TYPE2.feed });
    if (p.page < last) links.push({ rel: 'next', href: at(p.page + 1), type: TYPE2.feed });
  }
  return links;
}

export interface Feed2Body {
  navigation?: Link2[];
  publications?: object[];
  groups?: Group2[];
  facets?: { title: string; links: Link2[] }[];
}

export function feed2(h: Feed2Head, body: Feed2Body): string {
  const metadata: Record<string, unknown> = { title: h.title };
  if (h.modified) metadata.modified = h.modified;
  if (h.paging) Object.assign(metadata, { numberOfItems: h.paging.total, itemsPerPage: h.paging.perPage, currentPage: h.paging.page });
  const doc: Record<string, unknown> = { metadata, links: headLinks(h) };
  if (body.facets) doc.facets = body.facets.map((f) => ({ metadata: { title: f.title }, links: f.links }));
  if (body.navigation) doc.navigation = body.navigation;
  if (body.groups)
    doc.groups = body.groups.map((g) => ({
      metadata: { title: g.title },
      links: [{ rel: 'self', href: g.href, type: TYPE2.feed }],
      publications: g.publications,
    }));
  // a feed needs one of navigation, publications, groups: an empty page is an empty publication list
  if (body.publications || (!body.navigation && !body.groups)) doc.publications = body.publications ?? [];
  return JSON.stringify(doc);
}

/** A navigation link of a feed: a subsection with its number of items when known. */
export const nav2 = (title: string, href: string, count?: number, rel = 'subsection'): Link2 => ({
  href,
  title,
  type: TYPE2.feed,
  rel,
  ...(count === undefined ? {} : { properties: { numberOfItems: count } }),
});

function metadataOf(item: Catalog.MediaItem, base: string, stream?: StreamInfo): Record<string, unknown> {
  const m: Record<string, unknown> = {
    '@type': item.formats.some((f) => ['cbz', 'cbr', 'cb7'].includes(f.format.toLowerCase())) ? 'http://schema.org/ComicIssue' : 'http://schema.org/Book',
    identifier: `urn:uuid:${item.id}`,
    title: item.title,
    modified: item.updated_at,
  };
  if (item.sort_title && item.sort_title !== item.title) m.sortAs = item.sort_title;
  if (item.authors.length) m.author = item.authors.map((a) => ({ name: a, links: [{ href: `${base}${V2}/authors/${segment(a)}`, type: TYPE2.feed }] }));
  if (item.language && BCP47.test(item.language)) m.language = item.language;
  if (item.publisher) m.publisher = item.publisher;
  if (item.description) m.description = plainText(item.description);
  if (item.tags.length) m.subject = item.tags;
  if (item.series) {
    m.belongsTo = {
      series: [
        {
          name: item.series,
          ...(item.series_index !== null ? { position: item.series_index } : {}),
          links: [{ href: `${base}${V2}/series/${segment(item.series)}`, type: TYPE2.feed }],
        },
      ],
    };
  }
  const pages = stream?.count ?? item.page_count;
  if (pages !== null && pages > 0) m.numberOfPages = pages;
  if (item.reading_direction === 'rtl') m.readingProgression = 'rtl';
  return m;
}

/** The cover and thumbnail, or Bindery's placeholder (a publication needs a JPEG, PNG or GIF image). */
function imagesOf(item: Catalog.MediaItem, base: string): Link2[] {
  if (!item.cover_url) return [{ href: `${base}${V2}/no-cover.png`, type: 'image/png', rel: 'cover' }];
  return [
    { href: `${base}/covers/${item.id}`, type: 'image/jpeg', rel: 'cover' },
    { href: `${base}/thumbnails/${item.id}`, type: 'image/jpeg', rel: 'http://opds-spec.org/image/thumbnail' },
  ];
}

export function publication(item: Catalog.MediaItem, base: string, stream?: StreamInfo, words: OpdsWords = ENGLISH): Record<string, unknown> {
  const links: Link2[] = [{ rel: 'self', href: `${base}${V2}/publications/${item.id}`, type: TYPE2.publication }];
  for (const f of item.formats) {
    links.push({
      rel: ACQUISITION,
      href: `${base}/uploads/library-${item.library_id}/${encodePath(f.file_path)}`,
      type: mimeOf(f.file_path).split(';', 1)[0]!,
      title: f.format.toUpperCase(),
    });
  }
  if (stream) {
    // the page list (a Divina manifest) and the OPDS-PSE template, for apps that know either
    links.push({ rel: ACQUISITION, href: `${base}${V2}/publications/${item.id}/manifest`, type: TYPE2.divina, title: words.t('pages') });
    const properties: Record<string, unknown> = { numberOfItems: stream.count };
    if (stream.lastRead !== undefined) Object.assign(properties, { lastRead: stream.lastRead, lastReadDate: stream.lastReadDate });
    links.push({ rel: REL.pseStream, href: pseTemplate(base, item.id), type: 'image/jpeg', templated: true, properties });
  }
  return { metadata: metadataOf(item, base, stream), links, images: imagesOf(item, base) };
}

/**
 * A Divina manifest of a streamed book: its pages in reading order, each a JPEG from the page
 * route (converted when the file holds another format).
 */
export function pageManifest(item: Catalog.MediaItem, base: string, stream: StreamInfo): string {
  const self = `${base}${V2}/publications/${item.id}/manifest`;
  const metadata = { ...metadataOf(item, base, stream), conformsTo: 'https://readium.org/webpub-manifest/profiles/divina' };
  const readingOrder = Array.from({ length: stream.count }, (_, n) => ({ href: `${base}/pages/${item.id}/${n}?convert=jpeg`, type: 'image/jpeg' }));
  const doc: Record<string, unknown> = {
    '@context': 'https://readium.org/webpub-manifest/context.jsonld',
    metadata,
    links: [
      { rel: 'self', href: self, type: TYPE2.divina },
      { rel: 'alternate', href: `${base}${V2}/publications/${item.id}`, type: TYPE2.publication },
    ],
    readingOrder,
  };
  if (item.cover_url) doc.resources = [{ rel: 'cover', href: `${base}/covers/${item.id}`, type: 'image/jpeg' }];
  return JSON.stringify(doc);
}
