// The OPDS routes' schemas: OPDS 1.2 feeds (Atom), OpenSearch, OPDS 2.0 (JSON), files, covers and
// OPDS-PSE pages. Both trees (`/opds` and `/opds/key/<key>`) share them; the keyed tree adds the key.
import Type from 'typebox';
import type { RouteOptions } from 'fastify';
import { Binary, content, Empty, errors, params, query } from '../http/schemas';
import { TYPE } from './atom';
import { TYPE2 } from './json';

const tags = ['opds'];
const PAGING = { page: 'the page, from 1', per_page: 'entries per page' };
const refused = errors(400, 401, 403, 404, 429);

/** an OPDS 1.2 feed */
export const atomFeed = (kind: 'navigation' | 'acquisition', summary: string, p?: Record<string, string>, q: Record<string, string> = {}) => ({
  schema: {
    tags,
    summary,
    ...(p ? { params: params(p) } : {}),
    querystring: query({ ...PAGING, ...q }),
    response: { 200: content(`${TYPE[kind]};charset=utf-8`, `an OPDS 1.2 ${kind} feed`), ...refused },
  },
});

export const searchFeed = {
  schema: {
    tags,
    summary: 'search: the OpenSearch description without `q`, a feed of results with it',
    querystring: query({ ...PAGING, q: 'what to look for' }),
    response: {
      200: content([`${TYPE.openSearch};charset=utf-8`, `${TYPE.acquisition};charset=utf-8`], 'the OpenSearch description, or the results'),
      ...refused,
    },
  },
};

const Feed2 = Type.Object({ metadata: Type.Object({}), links: Type.Array(Type.Unknown()) }, { description: 'an OPDS 2.0 feed' });
const Publication2 = Type.Object({ metadata: Type.Object({}), links: Type.Array(Type.Unknown()) }, { description: 'an OPDS 2.0 publication' });

/** an OPDS 2.0 feed */
export const jsonFeed = (summary: string, p?: Record<string, string>, q: Record<string, string> = {}) => ({
  schema: {
    tags: ['opds 2'],
    summary,
    ...(p ? { params: params(p) } : {}),
    querystring: query({ ...PAGING, ...q }),
    response: { 200: content(TYPE2.feed, 'an OPDS 2.0 feed', Feed2), ...refused },
  },
});
export const jsonPublication = (manifest: boolean) => ({
  schema: {
    tags: ['opds 2'],
    summary: manifest ? 'the pages of a publication (a Divina manifest)' : 'one publication',
    params: params({ id: 'the media item' }),
    response: { 200: manifest ? content(TYPE2.divina, 'the page list', Publication2) : content(TYPE2.publication, 'the publication', Publication2), ...refused },
  },
});
export const noCover = { schema: { tags: ['opds 2'], summary: 'the plain cover of publications without one', response: { 200: content('image/png', 'a PNG', Binary) } } };

/** a library file, named for download */
export const fileSchema = {
  schema: {
    tags,
    summary: 'a catalogued file, named for download',
    params: params({ libraryId: 'the library', '*': 'the file, relative to a library folder' }),
    response: {
      200: content('application/octet-stream', 'the file (its own type)', Binary),
      206: content('application/octet-stream', 'a byte range of it', Binary),
      304: Empty('unchanged (If-None-Match, If-Modified-Since)'),
      416: errors(416)[416],
      ...refused,
    },
  },
};
export const pageSchema = {
  schema: {
    tags,
    summary: 'OPDS-PSE: one page of a comic, a PDF or an image-only EPUB',
    params: params({ id: 'the media item', n: 'the page, from 0' }),
    querystring: query({ width: 'scale to at most this width', convert: '`jpeg`' }),
    response: { 200: content(['image/jpeg', 'image/png', 'image/webp', 'image/gif'], 'the page', Binary), ...errors(400, 401, 403, 404, 422, 429, 503) },
  },
};
const TextRun = Type.Object({
  str: Type.String({ description: 'the text, as the PDF gives it' }),
  x: Type.Number({ description: 'left, a share of the page width (0..1)' }),
  y: Type.Number({ description: 'top, a share of the page height (0..1)' }),
  w: Type.Number({ description: 'width, a share of the page width' }),
  h: Type.Number({ description: 'height, a share of the page height' }),
});
const PageText = Type.Object(
  {
    page: Type.Integer({ description: 'the page, from 0' }),
    width: Type.Number({ description: 'the page width in points, as shown' }),
    height: Type.Number({ description: 'the page height in points, as shown' }),
    items: Type.Array(TextRun, { description: 'the text runs, in the order the PDF gives them; none for a page without text' }),
  },
  { description: 'the text of a PDF page, its boxes as shares of the page' },
);
const TextHits = Type.Object(
  {
    hits: Type.Array(Type.Object({ page: Type.Integer({ description: 'the page, from 0' }), pre: Type.String(), match: Type.String(), post: Type.String() })),
    searched: Type.Integer({ description: 'pages read' }),
    truncated: Type.Boolean({ description: 'whether pages or hits were left out past the limits' }),
  },
  { description: 'where the text is, page by page' },
);
export const pageTextSchema = {
  schema: {
    tags,
    summary: 'the text of one PDF page with its boxes, for a text layer over the page picture',
    params: params({ id: 'the media item', n: 'the page, from 0' }),
    response: { 200: content('application/json', 'the page text', PageText), ...errors(400, 401, 403, 404, 422, 503) },
  },
};
export const pageSearchSchema = {
  schema: {
    tags,
    summary: "search the text of an item's PDF pages",
    params: params({ id: 'the media item' }),
    querystring: query({ q: 'what to look for, 2 to 200 characters' }),
    response: { 200: content('application/json', 'the hits', TextHits), ...errors(400, 401, 403, 404, 422, 503) },
  },
};
export const coverSchema = (kind: string) => ({
  schema: {
    tags,
    summary: `an item's ${kind}`,
    params: params({ id: 'the media item' }),
    response: { 200: content('image/jpeg', `the ${kind}`, Binary), 304: Empty('unchanged (If-None-Match)'), ...refused },
  },
});

/** onRoute of the keyed tree: its routes take the reader key from the path too */
export function keyParam(r: RouteOptions): void {
  // a copy: the unkeyed tree registers the same schema objects
  const given = (r.schema?.params as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  r.schema = { ...r.schema, params: Type.Object({ key: Type.String({ description: 'a reader key' }), ...(given as Record<string, ReturnType<typeof Type.String>>) }) };
}
