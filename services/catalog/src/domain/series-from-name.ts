// Series, number and volume read from a book's folder and file names, for files that carry no
// series of their own (MOBI, AZW3, PDF, a CBZ without ComicInfo, an EPUB without one). Pure.
//
// What is recognised, as comic and book collections are laid out:
//   Series/07 - Title.epub         Author/Series/01 Title.epub      (folder = series, leading number)
//   Series 001 (2011).cbz          Series - 012.cbz                 (zero-padded or after " - ")
//   Series #12.cbz                 Series v1 #3.cbz                 (# marks an issue number)
//   Series Vol. 2.pdf              Series - Chapter 004.cbz         (volume, chapter, issue words)
// What is not, on purpose: a bare trailing number without padding, '#' or a dash ("Fahrenheit
// 451", "Catch 22"), a leading number of four digits ("1984", "2001 A Space Odyssey"), a number
// that is a year, and a leading number in a folder that names no series (the library's top, a
// generic "inbox" or "comics", or one of the book's authors).

export interface NamedSeries {
  series: string;
  /** the issue, chapter or book number; the volume when that is all there is */
  index: number | null;
  volume: number | null;
  /** what is left of the file name as a title ("07 - Title" gives "Title"); null if nothing */
  title: string | null;
  /** a year in parentheses, e.g. "(2011)" */
  year: number | null;
}

/** Folder names that sort books rather than name a series. Compared case-insensitively. */
const GENERIC_FOLDERS = new Set([
  'books',
  'ebooks',
  'e-books',
  'comics',
  'manga',
  'graphic novels',
  'magazines',
  'library',
  'libraries',
  'inbox',
  'incoming',
  'unsorted',
  'sorted',
  'downloads',
  'download',
  'new',
  'misc',
  'other',
  'others',
  'various',
  'backup',
  'backups',
  'duplicates',
  'archive',
  'archives',
  'tmp',
  'temp',
  'to read',
  'read',
  'calibre',
  'kindle',
  'kobo',
  'pdf',
  'pdfs',
  'epub',
  'mobi',
  'cbz',
  'cbr',
  'fiction',
  'non-fiction',
  'nonfiction',
  'series',
  'collection',
  'collections',
  'standalone',
  'standalones',
  'one-shots',
]);

const NUMBER = String.raw`\d{1,4}(?:\.\d{1,2})?`;
const VOLUME_WORD = String.raw`(?:v|vol\.?|volume|tome|bd\.)`;
/** words that number a book only after a dash ("Series - Book 2"; "The Jungle Book 2" is a title) */
const NUMBER_WORD = String.raw`(?:#|no\.?|nr\.?|issue|chapter|chap\.?|ch\.?|episode|ep\.?|part|pt\.?|book)`;
/** words that number a book wherever they stand */
const ISSUE_WORD = String.raw`(?:issue|chapter|chap\.|ch\.|episode)`;

/** "Series v1 #3", "Series Vol. 2 #3", "Series v01 003" */
const WITH_VOLUME = new RegExp(
  String.raw`^(?<series>.+?)\s+${VOLUME_WORD}\s*(?<volume>${NUMBER})(?:\s*(?:-\s*)?(?:${NUMBER_WORD}\s*)?(?<number>${NUMBER}))?(?:\s*[-:]\s*(?<title>.+))?$`,
  'iu',
);
/** "Series #12", "Series - Chapter 004", "Series - 012", "Series Issue 7", "Series 001" */
const WITH_NUMBER = new RegExp(
  String.raw`^(?<series>.+?)(?:\s*#\s*|\s+-\s+(?:${NUMBER_WORD}\s*)?|\s+${ISSUE_WORD}\s*|\s+(?=0\d))(?<number>${NUMBER})(?:\s*[-:]\s*(?<title>.+))?$`,
  'iu',
);
/** "07 - Title", "01 Title", "1. Title", "003" (a folder gives the series) */
const LEADING_NUMBER = /^(?<number>\d{1,3}(?:\.\d{1,2})?)(?:\s*[-–—.:)]\s*|\s+)(?<title>.*\S)?$|^(?<only>\d{1,3})$/u;
/** "Vol. 2", "Chapter 5 - Title", "#3" (a folder gives the series) */
const LEADING_WORD = new RegExp(String.raw`^(?:${VOLUME_WORD}|${NUMBER_WORD})\s*(?<number>${NUMBER})(?:\s*[-:.]\s*(?<title>.+))?$`, 'iu');

/** The file name without extension, underscores as spaces, bracketed tags and a year taken off. */
function stem(fileName: string): { text: string; year: number | null } {
  let s = fileName.replace(/\.kepub\.epub$/iu, '').replace(/\.[^.]{1,5}$/u, '');
  s = s.replace(/_/gu, ' ').replace(/^\s*\[[^\]]*\]\s*/u, ''); // a leading "[Group]" tag too
  // what file managers add to a copy: "Copy of X", "X - Copy", "X (1)" (the last goes below)
  s = s.replace(/^copy of\s+/iu, '').replace(/\s+-\s+copy(?:\s*\(\d+\))?$/iu, '');
  let year: number | null = null;
  // trailing groups: "(2011)", "(Digital)", "[Scanlator]", "(of 6)"
  for (;;) {
    const m = /\s*(?:\(([^()]*)\)|\[([^[\]]*)\]|\{([^{}]*)\})\s*$/u.exec(s);
    if (!m || m.index === 0) break;
    const inner = (m[1] ?? m[2] ?? m[3] ?? '').trim();
    if (year === null && /^(1[89]|20)\d\d$/u.test(inner)) year = Number(inner);
    s = s.slice(0, m.index);
  }
  return { text: s.replace(/\s+/gu, ' ').trim(), year };
}

/** A series name from a folder: its bracketed tags and year dropped. */
function folderSeries(folder: string): string {
  return stem(`${folder}.x`).text;
}

const isYear = (n: number, raw: string) => raw.length === 4 && n >= 1800 && n <= 2099;

function num(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
}

/** A usable series name: some letter, not just a number or a year. */
function seriesName(s: string | undefined): string | null {
  const t = (s ?? '').replace(/[\s\-–—:,.]+$/u, '').trim();
  if (t === '' || !/\p{L}/u.test(t)) return null;
  return t;
}

const cleanTitle = (t: string | undefined): string | null => {
  const s = (t ?? '').trim();
  return s === '' ? null : s;
};

/**
 * Series from a library-relative path ('/'-separated). `authors`: the book's own authors, whose
 * folder is not taken for a series. Null when the names say nothing about a series.
 */
export function seriesFromPath(relPath: string, authors: readonly string[] = []): NamedSeries | null {
  const parts = relPath.split('/').filter((p) => p !== '');
  const fileName = parts.pop();
  if (!fileName) return null;
  const { text, year } = stem(fileName);
  if (text === '') return null;

  const v = WITH_VOLUME.exec(text)?.groups;
  if (v) {
    const series = seriesName(v.series);
    const volume = num(v.volume);
    const number = num(v.number);
    if (series && volume !== null && !isYear(volume, v.volume!)) {
      return { series, index: number ?? volume, volume, title: cleanTitle(v.title), year };
    }
  }

  const n = WITH_NUMBER.exec(text)?.groups;
  if (n) {
    const series = seriesName(n.series);
    const number = num(n.number);
    if (series && number !== null && !isYear(number, n.number!)) {
      return { series, index: number, volume: null, title: cleanTitle(n.title), year };
    }
  }

  const lead = LEADING_NUMBER.exec(text)?.groups ?? LEADING_WORD.exec(text)?.groups;
  const folder = parts.at(-1);
  if (lead && folder) {
    const series = seriesName(folderSeries(folder));
    const authorFolder = authors.some((a) => sameName(a, folder));
    const index = num(lead.number ?? lead.only);
    if (series && !GENERIC_FOLDERS.has(series.toLowerCase()) && !authorFolder && index !== null) {
      return { series, index, volume: null, title: cleanTitle(lead.title), year };
    }
  }
  return null;
}

/** "Hartley, J. R." and "J. R. Hartley" name the same person as a folder. */
function sameName(author: string, folder: string): boolean {
  const key = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .sort()
      .join(' ');
  return key(author) === key(folder);
}
