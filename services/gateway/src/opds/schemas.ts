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
