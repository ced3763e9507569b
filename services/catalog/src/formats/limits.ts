// Bounds on what one book may make us read, so a hostile or broken file costs little.

const MiB = 1024 * 1024;

export const MAX_ARCHIVE_ENTRIES = 20_000;
/** container.xml, OPF, ComicInfo.xml, a cover XHTML page. */
export const MAX_XML_BYTES = 4 * MiB;
export const MAX_COVER_BYTES = 40 * MiB;
/** A comic page declared larger than this, or inflating more than MAX_PAGE_RATIO times its
 * compressed size (JPEG and PNG barely compress), is a zip bomb: the archive is an issue. */
export const MAX_PAGE_BYTES = 64 * MiB;
export const MAX_PAGE_RATIO = 100;
/** Pages smaller than this are not judged by their ratio (tiny files compress oddly). */
export const PAGE_RATIO_FROM_BYTES = 1 * MiB;
/** FB2 is one XML document with its images inline, so it is read whole. */
export const MAX_FB2_BYTES = 64 * MiB;
/** pdf.js needs the whole file in memory (its range reader needs Node 22's iterator helpers),
 * and holds about twice that while parsing: a PDF over this is catalogued from its names alone. */
export const MAX_PDF_PARSE_BYTES = 128 * MiB;
/** PDFs over this are parsed one at a time per process, so a scan's concurrency does not
 * multiply the memory they take. */
export const PDF_ONE_AT_A_TIME_BYTES = 16 * MiB;
/** MOBI record 0 holds the headers and EXTH metadata; real ones are a few KiB. */
export const MAX_MOBI_HEADER_RECORD_BYTES = 4 * MiB;
export const PDF_TIMEOUT_MS = 60_000;
export const PDF_RENDER_TIMEOUT_MS = 20_000;
