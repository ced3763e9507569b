import { describe, expect, it } from 'vitest';
import { contentDisposition } from '../src/files/disposition';
import { isActiveContent, mimeOf } from '../src/files/mime';

describe('mimeOf', () => {
  it.each([
    ['book.epub', 'application/epub+zip'],
    ['book.kepub.epub', 'application/kepub+zip'],
    ['book.kepub', 'application/kepub+zip'],
    ['comic.cbz', 'application/vnd.comicbook+zip'],
    ['comic.cbr', 'application/vnd.comicbook-rar'],
    ['comic.cb7', 'application/x-cb7'],
    ['comic.cbt', 'application/x-cbt'],
    ['book.mobi', 'application/x-mobipocket-ebook'],
    ['book.azw3', 'application/vnd.amazon.mobi8-ebook'],
    ['book.azw', 'application/vnd.amazon.ebook'],
    ['book.fb2', 'application/x-fictionbook+xml'],
    ['book.pdf', 'application/pdf'],
    ['cover.jpg', 'image/jpeg'],
    ['cover.jpeg', 'image/jpeg'],
    ['cover.png', 'image/png'],
    ['cover.gif', 'image/gif'],
    ['cover.webp', 'image/webp'],
    ['cover.avif', 'image/avif'],
    ['cover.svg', 'image/svg+xml'],
    ['notes.txt', 'text/plain; charset=utf-8'],
    ['page.html', 'text/html; charset=utf-8'],
    ['BOOK.EPUB', 'application/epub+zip'],
    ['Some.Series.v01.CBZ', 'application/vnd.comicbook+zip'],
    ['dir.with.dots/file.unknownext', 'application/octet-stream'],
    ['README', 'application/octet-stream'],
    ['trailing.', 'application/octet-stream'],
    ['x.constructor', 'application/octet-stream'],
    ['x.__proto__', 'application/octet-stream'],
  ])('%s → %s', (name, type) => {
    expect(mimeOf(name)).toBe(type);
  });

  it('flags types a browser would run script in', () => {
    expect(isActiveContent('text/html; charset=utf-8')).toBe(true);
    expect(isActiveContent('image/svg+xml')).toBe(true);
    expect(isActiveContent('application/xhtml+xml')).toBe(true);
    expect(isActiveContent('application/epub+zip')).toBe(false);
    expect(isActiveContent('image/jpeg')).toBe(false);
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII stand-in and the exact name, NFC', () => {
    const nfd = 'Cafe\u0301 Cre\u0300me.epub';
    expect(contentDisposition(nfd)).toBe(`inline; filename="Cafe Creme.epub"; filename*=UTF-8''Caf%C3%A9%20Cr%C3%A8me.epub`);
  });

  it('keeps quotes, backslashes, percent signs and line breaks out of the header', () => {
    const v = contentDisposition('a"b\\c%41\r\nSet-Cookie: x.epub');
    expect(v).not.toMatch(/[\r\n]/);
    expect(v).toBe(`inline; filename="a_b_c_41__Set-Cookie: x.epub"; filename*=UTF-8''a%22b%5Cc%2541%0D%0ASet-Cookie%3A%20x.epub`);
  });

  it('encodes the characters encodeURIComponent leaves but RFC 8187 does not allow', () => {
    expect(contentDisposition("it's (1)*.epub")).toBe(`inline; filename="it's (1)*.epub"; filename*=UTF-8''it%27s%20%281%29%2A.epub`);
  });

  it('replaces what has no ASCII form, and survives a lone surrogate', () => {
    expect(contentDisposition('日本語.epub')).toBe(`inline; filename="___.epub"; filename*=UTF-8''%E6%97%A5%E6%9C%AC%E8%AA%9E.epub`);
    expect(contentDisposition('a\uD800b.epub', 'attachment')).toBe(`attachment; filename="a_b.epub"; filename*=UTF-8''a%EF%BF%BDb.epub`);
  });
});
