// What CBZ and CBR share: which entries are pages, their order, the cover page, the metadata.
import { BookError } from './book-error';
import type { ComicInfo } from './comic-info';
import { isPageName } from './images';
import { naturalCompare } from './text';
import { emptyMetadata, type BookMetadata } from './types';

export interface ComicLayout {
  metadata: BookMetadata;
  /** Page entry names in reading order; never empty. */
  pages: string[];
  /** Page names to try as the cover, best first. */
  coverCandidates: string[];
}

export function isComicInfoName(name: string): boolean {
  return name.toLowerCase() === 'comicinfo.xml';
}

export function comicLayout(entryNames: string[], info: ComicInfo | null): ComicLayout {
  const pages = entryNames.filter(isPageName).sort(naturalCompare);
  if (pages.length === 0) throw new BookError('no images in archive');
  const metadata: BookMetadata = { ...emptyMetadata(), ...info?.metadata };
  // The pages that are really there win over a PageCount that may be stale.
  metadata.page_count = pages.length;
  const front = info?.frontCover;
  const first = pages[0] as string;
  const marked = front !== null && front !== undefined ? pages[front] : undefined;
  return { metadata, pages, coverCandidates: marked && marked !== first ? [marked, first] : [first] };
}
