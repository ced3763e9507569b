// The query strings of the item list and search, as far as services agree on them: their shape,
// the sort keys a client may name, and the messages a bad value gets. The rules that read them are
// the catalog's (`services/catalog/src/domain/query.ts`, exported as `@bindery/catalog/query`),
// used by the catalog's handlers and by the gateway's read models, so both answer the same request
// with the same message.
import Type from 'typebox';

/** A query string: each parameter once, or repeated (an array). */
export const QueryString = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));
export type Query = Type.Static<typeof QueryString>;

/** Sort orders of the item list (`-` in front, or `:desc` after, for descending). */
export const SORT_KEYS = ['title', 'created_at', 'updated_at', 'series', 'year', 'author'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

/** The messages of a bad query-string value (the spec shows none for these). */
export const QueryMessages = {
  limit: (max: number) => `limit must be an integer between 1 and ${max}`,
  offset: 'offset must be a non-negative integer',
  bool: (key: string) => `${key} must be true or false`,
  sort: `invalid sort. must be one of: ${SORT_KEYS.join(', ')} (prefix - or suffix :desc for descending)`,
  tooLong: (key: string, max: number) => `${key} must be at most ${max} characters`,
  year: 'year must be an integer between 0 and 9999',
} as const;
