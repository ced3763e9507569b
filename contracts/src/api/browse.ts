// The public bodies of /api/series and /api/authors: lists of names with their counts, one series
// with its books in index order, and the query strings they take.
import Type from 'typebox';
import { MediaItem } from './catalog';
import { Nullable } from './schemas';

const Count = Type.Integer({ minimum: 0 });
const Paging = { total: Count, limit: Type.Integer(), offset: Type.Integer() };

const seriesCounts = {
  name: Type.String({ description: 'the name as its books spell it' }),
  book_count: Count,
  read_count: Type.Integer({ minimum: 0, description: 'books the caller has finished' }),
  in_progress_count: Type.Integer({ minimum: 0, description: 'books the caller has begun and not finished' }),
  unread_count: Type.Integer({ minimum: 0, description: 'books the caller has not begun' }),
  progress: Type.Number({ minimum: 0, maximum: 1, description: "the caller's progress through the whole series (the mean of its books' positions)" }),
  cover_item_id: Nullable(Type.String({ description: 'the first book in index order that has a cover: its thumbnail is the series cover' })),
};
export const SeriesSummary = Type.Object(seriesCounts, { description: 'a series and the caller’s progress in it' });
export const SeriesList = Type.Object({ data: Type.Array(SeriesSummary), ...Paging }, { description: 'the series of the books the caller may see, a page of them' });
export const SeriesDetail = Type.Object(
  {
    ...seriesCounts,
    description: Nullable(Type.String({ description: 'the description of its first book in index order that has one' })),
    next_item_id: Nullable(Type.String({ description: 'the first book in index order the caller has not finished' })),
    next_title: Nullable(Type.String({ description: 'the title of that book (on whatever page it is)' })),
    next_percentage: Nullable(Type.Number({ description: 'the caller’s position in that book, null when not begun' })),
    missing_numbers: Type.Array(Type.Integer(), { description: 'whole numbers from 1 to the highest whole index that no book carries (at most 100)' }),
    missing_count: Count,
    data: Type.Array(Type.Object({ media_item_id: Type.String(), percentage: Nullable(Type.Number()), item: MediaItem }), {
      description: 'its books in index order (those without a number last, by title), with the caller’s position',
    }),
    ...Paging,
  },
  { description: 'one series: its counts, what to read next, and a page of its books' },
);
export const AuthorList = Type.Object(
  {
    data: Type.Array(Type.Object({ name: Type.String(), book_count: Count, series_count: Count })),
    ...Paging,
  },
  { description: 'the authors of the books the caller may see, a page of them' },
);

const listQuery = {
  library_id: 'only this library (UUID)',
  q: 'names containing this text (any case, at most 200 characters)',
  letter: 'names beginning with this letter (A to Z, accents ignored), or # for any other beginning',
  limit: 'how many (default 50, at most 1000)',
  offset: 'how many to skip',
};
export const SeriesQuery = {
  ...listQuery,
  sort: 'name (default), created_at (the newest book) or book_count; - in front for descending',
  read_status: "unread (no book begun), reading (begun, not all finished) or finished (every book), by the caller's positions",
};
export const SeriesBooksQuery = { library_id: 'only this library (UUID)', limit: 'how many books (default 200, at most 1000)', offset: 'how many to skip' };
export const AuthorQuery = { ...listQuery, sort: 'name (default) or book_count; - in front for descending' };
