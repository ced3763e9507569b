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
    expect(bestFormat([f('mobi'), f('pdf'), f('epub')], 'a@kindle.com')?.format).toBe('epub');
    expect(bestFormat([f('azw3'), f('pdf')], 'a@kindle.com')?.format).toBe('pdf');
    expect(bestFormat([f('azw3'), f('mobi'), f('cbz')], 'a@kindle.com')).toBeNull();
  });

  it('sends any other address its best format', () => {
    expect(bestFormat([f('cbz'), f('mobi')], 'a@pocketbook.example')?.format).toBe('mobi');
    expect(bestFormat([f('cbz')], 'a@pocketbook.example')?.format).toBe('cbz');
    expect(bestFormat([], 'a@pocketbook.example')).toBeNull();
  });
});
