// ComicInfo.xml (the ComicRack schema that CBZ/CBR tools write) to metadata.
import { clean, htmlToText, normalizeIsbn, numberOf, splitList, unique, yearOf } from './text';
import type { BookMetadata, Contributor } from './types';
import { XMLValidator } from 'fast-xml-parser';
import { attr, child, elements, parseXml, textOf } from './xml';

export interface ComicInfo {
  metadata: Partial<BookMetadata>;
  /** Index into the sorted pages of the page marked FrontCover, when one is. */
  frontCover: number | null;
}

const ROLES: [tag: string, role: string][] = [
  ['writer', 'writer'],
  ['penciller', 'penciller'],
  ['inker', 'inker'],
  ['colorist', 'colorist'],
  ['letterer', 'letterer'],
  ['coverartist', 'cover_artist'],
  ['editor', 'editor'],
  ['translator', 'translator'],
];

/** null when the text is not a well-formed ComicInfo document; a broken one must not fail the
 * book, nor lend it half-parsed fields (an unclosed <Title> swallowing the next tag's text). */
export function parseComicInfo(text: string): ComicInfo | null {
  if (XMLValidator.validate(text) !== true) return null;
  let root: ReturnType<typeof parseXml>;
  try {
    root = parseXml(text);
  } catch {
    return null;
  }
  if (root?.name !== 'comicinfo') return null;
  const field = (tag: string): string | null => clean(textOf(child(root, tag)));

  const m: Partial<BookMetadata> = {};
  m.title = field('title');
  m.series = field('series');
  // Manga volumes often carry only <Volume>; elsewhere Volume is a start year, hence the bound.
  const volume = numberOf(field('volume'));
  m.series_index = numberOf(field('number')) ?? (volume !== null && volume < 1000 ? volume : null);
  const summary = field('summary');
  m.description = summary ? htmlToText(summary) : null;
  m.year = yearOf(field('year'));
  m.language = field('languageiso');
  m.publisher = field('publisher');
  m.subjects = unique([...splitList(field('genre'), /,/u), ...splitList(field('tags'), /,/u)]);
  const people: Contributor[] = [];
  for (const [tag, role] of ROLES) for (const name of splitList(field(tag), /,/u)) people.push({ name, role });
  m.contributors = unique(people, (c) => `${c.role}\u0000${c.name}`);
  m.reading_direction = field('manga')?.toLowerCase() === 'yesandrighttoleft' ? 'rtl' : null;
  m.page_count = numberOf(field('pagecount'));
  const isbn = normalizeIsbn(field('gtin'));
  if (isbn) m.identifiers = { isbn };
  m.isbn = isbn;

  const front = elements(child(root, 'pages'), 'page').find((p) => attr(p, 'type')?.trim().toLowerCase() === 'frontcover');
  const index = numberOf(attr(front, 'image'));
  return { metadata: m, frontCover: index !== null && Number.isInteger(index) && index >= 0 ? index : null };
}
