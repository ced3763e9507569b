// The series and author lists (GET /api/series, /api/series/<name>, /api/authors): the sort keys a
// client may name and the messages of a bad value. The spec shows none of these (Bindery's own).

/** Orders of the series list (`-` in front for descending). */
export const SERIES_SORT_KEYS = ['name', 'created_at', 'book_count'] as const;
/** Orders of the author list (`-` in front for descending). */
export const AUTHOR_SORT_KEYS = ['name', 'book_count'] as const;

/** The longest series or author name a path may carry (a search value's bound). */
export const MAX_NAME = 200;

export const BrowseMessages = {
  letter: 'letter must be one letter from A to Z, or # for names that begin otherwise',
  sort: (keys: readonly string[]) => `invalid sort. must be one of: ${keys.join(', ')} (prefix - for descending)`,
  seriesNotFound: 'series not found',
  nameTooLong: `the name must be at most ${MAX_NAME} characters`,
} as const;
