// Content types for served files: the book formats by Bindery's own table (mime's defaults lump
// all comic archives together as x-cbr), everything else as the `mime` package knows it.
import mime from 'mime';

const BOOK_TYPES: ReadonlyMap<string, string> = new Map(
  Object.entries({
    epub: 'application/epub+zip',
    kepub: 'application/kepub+zip',
    cbz: 'application/vnd.comicbook+zip',
    cbr: 'application/vnd.comicbook-rar',
    cb7: 'application/x-cb7',
    cbt: 'application/x-cbt',
    mobi: 'application/x-mobipocket-ebook',
    azw3: 'application/vnd.amazon.mobi8-ebook',
    azw: 'application/vnd.amazon.ebook',
    fb2: 'application/x-fictionbook+xml',
    pdf: 'application/pdf',
  }),
);

export const OCTET_STREAM = 'application/octet-stream';

export function mimeOf(fileName: string): string {
  const lower = fileName.toLowerCase();
  // Kobo's kepub keeps an .epub suffix so other readers still open it.
  if (lower.endsWith('.kepub.epub')) return BOOK_TYPES.get('kepub')!;
  const dot = lower.lastIndexOf('.');
  const ext = dot >= 0 ? lower.slice(dot + 1) : '';
  const type = BOOK_TYPES.get(ext) ?? (ext ? mime.getType(ext) : null) ?? OCTET_STREAM;
  return type.startsWith('text/') ? `${type}; charset=utf-8` : type;
}

/** Types a browser would run script in when opened inline; they are served sandboxed. */
export function isActiveContent(type: string): boolean {
  const t = type.split(';', 1)[0]!.trim();
  return t === 'text/html' || t === 'image/svg+xml' || t === 'application/xhtml+xml' || t === 'text/xml' || t === 'application/xml';
}
