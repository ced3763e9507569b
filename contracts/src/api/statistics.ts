// The reading statistics' answers (decision 120): a person's year, and the library's year (everyone
// in its totals, by name only the people who share theirs). The gateway's view computes them, its
// routes declare them, and the statistics pages read them typed from here (decision 119).
import Type from 'typebox';

const Seconds = Type.Integer({ minimum: 0, description: 'seconds of reading' });

export const Figure = Type.Object({ name: Type.String(), seconds: Seconds, books: Type.Integer({ minimum: 0 }) });
export type Figure = Type.Static<typeof Figure>;

export const DayFigure = Type.Object({
  date: Type.String({ description: "the day in the person's time zone, YYYY-MM-DD" }),
  seconds: Seconds,
  books: Type.Integer({ minimum: 0, description: 'distinct books with a saved position that day' }),
  progress: Type.Number({ description: 'the share of books read that day (0.25 = a quarter of a book), summed over books' }),
});
export type DayFigure = Type.Static<typeof DayFigure>;

export const MonthFigure = Type.Object({
  month: Type.String({ description: 'YYYY-MM' }),
  seconds: Seconds,
  started: Type.Integer({ minimum: 0 }),
  finished: Type.Integer({ minimum: 0 }),
});
export type MonthFigure = Type.Static<typeof MonthFigure>;

export const BookFigure = Type.Object({
  id: Type.String(),
  title: Type.Union([Type.String(), Type.Null()], { description: 'null when the book is no longer in a library the person sees' }),
  seconds: Seconds,
  progress: Type.Number(),
  started: Type.Union([Type.String(), Type.Null()]),
  finished: Type.Union([Type.String(), Type.Null()]),
});
export type BookFigure = Type.Static<typeof BookFigure>;

export const PersonStatistics = Type.Object(
  {
    year: Type.Integer(),
    timezone: Type.String(),
    totals: Type.Object({
      seconds: Seconds,
      days_read: Type.Integer({ minimum: 0 }),
      books_read: Type.Integer({ minimum: 0 }),
      books_started: Type.Integer({ minimum: 0 }),
      books_finished: Type.Integer({ minimum: 0 }),
      progress: Type.Number(),
      current_streak: Type.Integer({ minimum: 0 }),
      longest_streak: Type.Integer({ minimum: 0 }),
    }),
    days: Type.Array(DayFigure),
    months: Type.Array(MonthFigure),
    by_device: Type.Array(Figure),
    by_format: Type.Array(Figure),
    by_author: Type.Array(Figure),
    by_series: Type.Array(Figure),
    by_tag: Type.Array(Figure),
    books: Type.Array(BookFigure),
  },
  { description: 'your figures for the year' },
);
export type PersonStatistics = Type.Static<typeof PersonStatistics>;

export const LibraryStatistics = Type.Object(
  {
    year: Type.Integer(),
    sharing: Type.Integer({ minimum: 0, description: 'people who let admins see their reading statistics' }),
    active_readers: Type.Integer({ minimum: 0, description: 'people who saved a position this year, sharing or not' }),
    seconds: Type.Integer({ minimum: 0, description: "everyone's seconds of reading this year" }),
    months: Type.Array(
      Type.Object({
        month: Type.String({ description: 'YYYY-MM' }),
        seconds: Seconds,
        readers: Type.Integer({ minimum: 0, description: 'people who saved a position that month' }),
      }),
      { description: 'each month of the year (days in UTC), everyone counted, no one named' },
    ),
    books: Type.Array(Type.Object({ id: Type.String(), title: Type.Union([Type.String(), Type.Null()]), readers: Type.Integer({ minimum: 0 }), seconds: Seconds }), {
      description: 'the most read books (most readers, then most time), at most 20, everyone counted',
    }),
    readers: Type.Array(Type.Object({ username: Type.String(), seconds: Seconds, days_read: Type.Integer({ minimum: 0 }), books: Type.Integer({ minimum: 0 }) }), {
      description: 'the people who let admins see their figures, most time first; no one else',
    }),
  },
  { description: "the library's figures for the year" },
);
export type LibraryStatistics = Type.Static<typeof LibraryStatistics>;
