// Which of a book's formats is mailed to an e-reader address (issue 47): a Kindle takes EPUB or PDF
// (Amazon's mail service took MOBI and AZW3 until 2022, no longer); any other address the best there is.
import { describe, expect, it } from 'vitest';
import type { Catalog } from '@bindery/contracts';
import { bestFormat, isKindle } from '../src/mail/sends';

const f = (format: string): Catalog.MediaFormat => ({ format, file_path: `b.${format}`, size: 1, sha256: null, partial_md5: null, modified_at: null, file_url: '' });

describe('the format mailed to an e-reader', () => {
  it('knows a Kindle address', () => {
    expect([isKindle('me@kindle.com'), isKindle(' Me@Free.Kindle.com '), isKindle('me@kindle.com.evil.example'), isKindle('me@pocketbook.example')]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  it('sends a Kindle the EPUB, else the PDF, never MOBI or AZW3 or a comic', () => {
    expect(bestFormat([f('mobi'), f('pdf'), f('epub')], 'a@kindle.com')).toEqual({ file: f('epub'), convert: false });
    expect(bestFormat([f('azw3'), f('pdf')], 'a@kindle.com')).toEqual({ file: f('pdf'), convert: false });
    expect(bestFormat([f('azw3'), f('mobi'), f('cbz')], 'a@kindle.com')).toBeNull();
  });

  it("converts a Kindle's AZW3 or MOBI to EPUB where calibre's converter is installed, never a comic", () => {
    expect(bestFormat([f('mobi'), f('azw3')], 'a@kindle.com', true)).toEqual({ file: f('azw3'), convert: true });
    expect(bestFormat([f('mobi')], 'a@kindle.com', true)).toEqual({ file: f('mobi'), convert: true });
    expect(bestFormat([f('cbz')], 'a@kindle.com', true)).toBeNull();
    expect(bestFormat([f('epub'), f('mobi')], 'a@kindle.com', true)).toEqual({ file: f('epub'), convert: false });
  });

  it('sends any other address its best format', () => {
    expect(bestFormat([f('cbz'), f('mobi')], 'a@pocketbook.example')?.file.format).toBe('mobi');
    expect(bestFormat([f('cbz')], 'a@pocketbook.example')?.file.format).toBe('cbz');
    expect(bestFormat([], 'a@pocketbook.example')).toBeNull();
  });
});
