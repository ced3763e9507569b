// What CBZ and CBR share: which entries are pages, their order, the cover page, the metadata.
import { ArchiveLimitError, BookError } from './book-error';
import { MAX_PAGE_BYTES, MAX_PAGE_RATIO, PAGE_RATIO_FROM_BYTES } from './limits';
import type { ComicInfo } from './comic-info';
import { isPageName, naturalCompare } from './page-order';
import { emptyMetadata, type BookMetadata } from './types';

export interface ComicLayout {
  metadata: BookMetadata;
  /** Page entry names in reading order; never empty. */
  pages: string[];
  /** Page names to try as the cover, best first. */
  coverCandidates: string[];
}

/** A page as the archive declares it: name, unpacked and packed sizes. */
export interface DeclaredPage {
  name: string;
  size: number;
  packed: number;
}

/** Refuses an archive whose pages are declared too large or compress like a bomb; nothing is inflated. */
export function checkDeclaredPages(pages: DeclaredPage[], label: string): void {
  for (const p of pages) {
    if (!isPageName(p.name)) continue;
    if (p.size > MAX_PAGE_BYTES) throw new ArchiveLimitError(`not a valid ${label}: ${p.name} is larger than ${MAX_PAGE_BYTES / 2 ** 20} MiB`);
    if (p.size >= PAGE_RATIO_FROM_BYTES && p.size / Math.max(1, p.packed) > MAX_PAGE_RATIO) {
      throw new ArchiveLimitError(`not a valid ${label}: ${p.name} inflates ${Math.round(p.size / Math.max(1, p.packed))} times its size (a zip bomb)`);
    }
  }
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
