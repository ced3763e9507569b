// OPDS 1.2 documents: navigation and acquisition feeds (Atom) and the OpenSearch description,
// built with xmlbuilder2. Every href is a path below the feed's base (`/opds` or a reader-key
// base), percent-encoded so it is a valid URI; no template braces ever appear in a feed.
import { ENGLISH, type OpdsWords } from './words';
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { create } from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces';
import type { Catalog } from '@bindery/contracts';
import { mimeOf } from '../files/mime';
import { lastPage } from './paging';
import type { StreamInfo } from './streams';

export const NS = {
  atom: 'http://www.w3.org/2005/Atom',
  dc: 'http://purl.org/dc/terms/',
  opds: 'http://opds-spec.org/2010/catalog',
  os: 'http://a9.com/-/spec/opensearch/1.1/',
  pse: 'http://vaemendis.net/opds-pse/ns',
  xmlns: 'http://www.w3.org/2000/xmlns/',
};

export const TYPE = {
  navigation: 'application/atom+xml;profile=opds-catalog;kind=navigation',
  acquisition: 'application/atom+xml;profile=opds-catalog;kind=acquisition',
  openSearch: 'application/opensearchdescription+xml',
};

/** The OPDS-PSE page template of an item (0-based {pageNumber}, optional {maxWidth}), in both OPDS trees. */
export const pseTemplate = (base: string, id: string) => `${base}/pages/${id}/{pageNumber}?width={maxWidth}`;

export const REL = {
  acquisition: 'http://opds-spec.org/acquisition',
  image: 'http://opds-spec.org/image',
  thumbnail: 'http://opds-spec.org/image/thumbnail',
  sortNew: 'http://opds-spec.org/sort/new',
  pseStream: 'http://vaemendis.net/opds-pse/stream',
};

/** A name-based UUID (RFC 4122 version 5) in Bindery's own namespace: the same name, the same id. */
export function nameUuid(name: string): string {
  const h = createHash('sha1').update('bindery-opds:').update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export const encodePath = (rel: string) => rel.split('/').map(encodeURIComponent).join('/');
export const segment = (name: string) => encodeURIComponent(name);

export interface FeedPaging {
  page: number;
  perPage: number;
  total: number;
  offset: number;
  /** the feed's path with its other query parameters, without page and per_page */
  path: string;
  query: Record<string, string>;
}

export interface FeedHead {
  /** stable across pages: the feed's path without paging */
  key: string;
  title: string;
  kind: 'navigation' | 'acquisition';
  base: string;
  self: string;
  up?: string;
  updated: string;
  paging?: FeedPaging;
  /** the language of the feed's own words (English when absent) */
  words?: OpdsWords;
}

export interface NavEntry {
  id: string;
  title: string;
  href: string;
  kind: 'navigation' | 'acquisition';
  content: string;
  updated: string;
  rel?: string;
}

function link(parent: XMLBuilder, rel: string, href: string, type: string, extra: Record<string, string> = {}): void {
  parent.ele(NS.atom, 'link', { rel, href, type, ...extra }).up();
}

const withQuery = (path: string, q: Record<string, string>) => {
  const s = new URLSearchParams(q).toString();
  return s ? `${path}?${s}` : path;
};

function head(h: FeedHead): XMLBuilder {
  const doc = create({ version: '1.0', encoding: 'UTF-8', invalidCharReplacement: '' });
  const feed = doc
    .ele(NS.atom, 'feed')
    .att(NS.xmlns, 'xmlns:dc', NS.dc)
    .att(NS.xmlns, 'xmlns:opds', NS.opds)
    .att(NS.xmlns, 'xmlns:opensearch', NS.os)
    .att(NS.xmlns, 'xmlns:pse', NS.pse);
  feed
    .ele(NS.atom, 'id')
    .txt(`urn:uuid:${nameUuid(h.key)}`)
    .up();
  feed.ele(NS.atom, 'title').txt(h.title).up();
  feed.ele(NS.atom, 'updated').txt(h.updated).up();
  feed.ele(NS.atom, 'author').ele(NS.atom, 'name').txt('Bindery').up().up();
  const type = TYPE[h.kind];
  link(feed, 'self', h.self, type);
  link(feed, 'start', h.base, TYPE.navigation);
  if (h.up) link(feed, 'up', h.up, TYPE.navigation);
  link(feed, 'search', `${h.base}/search`, TYPE.openSearch, { title: (h.words ?? ENGLISH).t('search') });
  const p = h.paging;
  if (p) {
    const last = lastPage(p.total, p.perPage);
    const at = (page: number) => withQuery(p.path, { ...p.query, page: String(page), per_page: String(p.perPage) });
    link(feed, 'first', at(1), type);
    link(feed, 'last', at(last), type);
    if (p.page > 1) link(feed, 'previous', at(Math.min(p.page - 1, last)), type);
    if (p.page < last) link(feed, 'next', at(p.page + 1), type);
    feed.ele(NS.os, 'opensearch:totalResults').txt(String(p.total)).up();
    feed.ele(NS.os, 'opensearch:itemsPerPage').txt(String(p.perPage)).up();
    feed
      .ele(NS.os, 'opensearch:startIndex')
      .txt(String(p.offset + 1))
      .up();
  }
  return feed;
}

const end = (feed: XMLBuilder) => feed.end({ prettyPrint: false });

export function navigationFeed(h: FeedHead, entries: NavEntry[]): string {
  const feed = head(h);
  for (const e of entries) {
    const en = feed.ele(NS.atom, 'entry');
    en.ele(NS.atom, 'title').txt(e.title).up();
    en.ele(NS.atom, 'id').txt(e.id).up();
    en.ele(NS.atom, 'updated').txt(e.updated).up();
    en.ele(NS.atom, 'content', { type: 'text' }).txt(e.content).up();
    link(en, e.rel ?? 'subsection', e.href, TYPE[e.kind]);
  }
  return end(feed);
}

/** Book descriptions often carry HTML: the summary is its plain text, bounded. */
export function plainText(html: string, max = 2000): string {
  const text = html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const typeOfFormat = (f: Catalog.MediaFormat) => mimeOf(f.file_path).split(';', 1)[0]!;

// Entries are written as text, not with xmlbuilder2 (about fifty times faster), and kept per
// item, base and stream state: a page nobody asked for yet is mostly entries already written.
const INVALID_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/gu;
/** Text as XML character data: characters XML cannot carry are dropped, markup escaped. */
export const xmlText = (s: string) => s.replace(INVALID_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const xmlAttr = (s: string) => xmlText(s).replace(/"/g, '&quot;').replace(/\r/g, '&#13;').replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
const el = (name: string, text: string, attrs = '') => `<${name}${attrs}>${xmlText(text)}</${name}>`;
const linkXml = (rel: string, href: string, type: string, extra: Record<string, string> = {}) =>
  `<link rel="${xmlAttr(rel)}" href="${xmlAttr(href)}" type="${xmlAttr(type)}"${Object.entries(extra)
    .map(([k, v]) => ` ${k}="${xmlAttr(v)}"`)
    .join('')}/>`;

const fragments = new LRUCache<string, string>({ max: 50_000, maxSize: 64 * 1024 * 1024, sizeCalculation: (s) => s.length * 2 || 1 });

/** One acquisition entry, from the per-item cache when the item, base and stream state are the same. */
export function entryXml(item: Catalog.MediaItem, base: string, stream?: StreamInfo, words: OpdsWords = ENGLISH): string {
  const key = `${item.id}|${item.updated_at}|${base}|${words.locale}|${stream ? `${stream.kind}|${stream.count}|${stream.lastRead ?? ''}|${stream.lastReadDate ?? ''}` : ''}`;
  const hit = fragments.get(key);
  if (hit !== undefined) return hit;
  const out: string[] = ['<entry>', el('title', item.title), el('id', `urn:uuid:${item.id}`), el('updated', item.updated_at)];
  for (const a of item.authors) out.push(`<author>${el('name', a)}${el('uri', `${base}/authors/${segment(a)}`)}</author>`);
  if (item.language) out.push(el('dc:language', item.language));
  if (item.publisher) out.push(el('dc:publisher', item.publisher));
  if (item.year !== null) out.push(el('dc:issued', String(item.year)));
  if (item.isbn) out.push(el('dc:identifier', `urn:isbn:${item.isbn}`));
  for (const t of item.tags) out.push(`<category term="${xmlAttr(t)}" label="${xmlAttr(t)}"/>`);
  const summary = item.description ? plainText(item.description) : '';
  const series = item.series ? `${item.series}${item.series_index !== null ? ` #${item.series_index}` : ''}` : '';
  const text = [series && words.t('entry.seriesSummary', { series }), summary].filter(Boolean).join(' ');
  if (text) out.push(el('summary', text, ' type="text"'));
  if (item.cover_url) {
    out.push(linkXml(REL.image, `${base}/covers/${item.id}`, 'image/jpeg'));
    out.push(linkXml(REL.thumbnail, `${base}/thumbnails/${item.id}`, 'image/jpeg'));
  }
  if (item.series) out.push(linkXml('related', `${base}/series/${segment(item.series)}`, TYPE.acquisition, { title: words.t('entry.series', { series: item.series }) }));
  // PSE: a URI template (0-based {pageNumber}, optional {maxWidth}); lastRead is 1-based
  if (stream) {
    const last: Record<string, string> = stream.lastRead !== undefined ? { 'pse:lastRead': String(stream.lastRead), 'pse:lastReadDate': stream.lastReadDate! } : {};
    out.push(linkXml(REL.pseStream, pseTemplate(base, item.id), 'image/jpeg', { 'pse:count': String(stream.count), ...last }));
  }
  for (const f of item.formats) {
    out.push(
      linkXml(REL.acquisition, `${base}/uploads/library-${item.library_id}/${encodePath(f.file_path)}`, typeOfFormat(f), { length: String(f.size), title: f.format.toUpperCase() }),
    );
  }
  out.push('</entry>');
  const xml = out.join('');
  fragments.set(key, xml);
  return xml;
}

export function acquisitionFeed(h: FeedHead, items: Catalog.MediaItem[], streams?: Map<string, StreamInfo>): string {
  const feed = end(head(h));
  const close = feed.lastIndexOf('</feed>');
  return `${feed.slice(0, close)}${items.map((i) => entryXml(i, h.base, streams?.get(i.id), h.words)).join('')}</feed>`;
}

/** The OpenSearch 1.1 description a reader app fetches from the search link. */
export function openSearchDescription(origin: string, base: string, words: OpdsWords = ENGLISH): string {
  const doc = create({ version: '1.0', encoding: 'UTF-8' });
  const d = doc.ele(NS.os, 'OpenSearchDescription');
  d.ele(NS.os, 'ShortName').txt('Bindery').up();
  d.ele(NS.os, 'Description').txt(words.t('search.description')).up();
  d.ele(NS.os, 'InputEncoding').txt('UTF-8').up();
  d.ele(NS.os, 'OutputEncoding').txt('UTF-8').up();
  // absolute, and only {searchTerms}: some apps neither resolve a relative template nor fill optional parameters
  d.ele(NS.os, 'Url', { type: TYPE.acquisition, template: `${origin}${base}/search?q={searchTerms}` }).up();
  d.ele(NS.os, 'Url', { type: 'application/atom+xml', template: `${origin}${base}/search?q={searchTerms}` }).up();
  return d.end({ prettyPrint: false });
}
