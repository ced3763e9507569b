// KEPUB conversion over real books (test/fixtures/corpus40 and the shared samples): each result is a
// structurally valid EPUB (mimetype first and stored, container and package present, every manifest
// item there, every content document well-formed XML), its body text equals the source's to the
// character, every span's offset names the text the span holds in the locator index's count, and
// span ids are unique per file. A document with no body and a hostile one convert without harm.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { epubText } from '../src/formats/epub';
import { convertToKepub, kepubDocument, sentences } from '../src/formats/kepub';
import { openZip } from '../src/formats/zip';

const REPO = join(import.meta.dirname, '../../..');
const CORPUS = join(REPO, 'test/fixtures/corpus40');
const SAMPLES = join(REPO, '../shared/peers/samples/books');
const epubs = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.toLowerCase().endsWith('.epub'))
        .map((f) => join(dir, f))
    : [];
const books = [...epubs(CORPUS), ...epubs(SAMPLES)];

describe('sentences', () => {
  it('splits after sentence ends and joins back to its input', () => {
    const s = 'He came. “Why?” she asked!  And then… nothing';
    expect(sentences(s)).toEqual(['He came. ', '“Why?” ', 'she asked!  ', 'And then… ', 'nothing']);
    expect(sentences(s).join('')).toBe(s);
    expect(sentences('No end')).toEqual(['No end']);
    expect(sentences('Ends here. ')).toEqual(['Ends here. ']);
  });
});

describe('kepubDocument', () => {
  it('wraps sentences, keeps entities and white space, and counts offsets as the locator does', () => {
    const src = '<html><head><title>T</title></head><body>\r\n<p>One &amp; two. Three.</p>\n<p>Four <em>five</em> six.</p><script>x=1</script></body></html>';
    const d = kepubDocument(src)!;
    expect(d.xhtml).toContain('<body><div id="book-columns"><div id="book-inner">');
    expect(d.xhtml).toContain('</div></div></body>');
    expect(d.xhtml).toContain('<span class="koboSpan" id="kobo.1.1">One &amp; two. </span><span class="koboSpan" id="kobo.1.2">Three.</span>');
    expect(d.xhtml).toContain('<script>x=1</script>');
    expect(d.xhtml).toContain('<style type="text/css">div#book-inner');
    // "\n" (CRLF as one) + "One & two. " = 12
    expect(d.spans).toEqual(['kobo.1.1', 1, 'kobo.1.2', 12, 'kobo.2.1', 19, 'kobo.2.2', 24, 'kobo.2.3', 28]);
    expect(d.n).toBe(36); // script text counts too, as in the locator index
    expect(XMLValidator.validate(d.xhtml)).toBe(true);
  });
  it('leaves documents without a body, and KEPUB documents, alone', () => {
    expect(kepubDocument('<svg xmlns="http://www.w3.org/2000/svg"/>')).toBeNull();
    expect(kepubDocument('<html><body><p><span class="koboSpan" id="kobo.1.1">x</span></p></body></html>')).toBeNull();
  });
  it('survives broken markup', () => {
    const d = kepubDocument('<html><body><p>a < b. c</p><p>open')!;
    expect(d.xhtml.endsWith('</div></div>')).toBe(true);
  });
});

describe('the same book', () => {
  afterEach(() => vi.useRealTimers());
  it('gives the same KEPUB bytes at any time of day (entries keep the EPUB’s times)', async () => {
    const bytes = readFileSync(books[0]!);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
    const first = await convertToKepub(bytes);
    vi.setSystemTime(new Date('2026-06-30T13:37:11Z'));
    const later = await convertToKepub(bytes);
    expect(later.data.equals(first.data)).toBe(true);
  });
});

describe.each(books.map((b) => [relative(REPO, b), b]))('KEPUB of %s', (_name, file) => {
  it('is a valid EPUB whose text equals the source and whose spans land on their text', async () => {
    const bytes = readFileSync(file);
    let src: Awaited<ReturnType<typeof epubText>>;
    try {
      src = await epubText(file, bytes);
    } catch {
      return; // a broken source (the corpus has some on purpose) is not offered as a KEPUB
    }
    const k = await convertToKepub(bytes);
    // structure: mimetype first, stored, exact; container and package; every manifest item
    expect(k.data.subarray(30, 38).toString()).toBe('mimetype');
    expect(k.data.readUInt16LE(8)).toBe(0);
    expect(k.data.subarray(38, 58).toString()).toBe('application/epub+zip');
    const zip = await openZip(file, 'EPUB', k.data);
    try {
      expect(zip.find('META-INF/container.xml')).not.toBeNull();
      const converted = new Set(k.spans.docs.filter((d) => d.spans.length).map((d) => d.path));
      for (const p of converted) {
        const xhtml = (await zip.read(zip.find(p)!, 64 * 1024 * 1024)).toString('utf8');
        expect(XMLValidator.validate(xhtml), p).toBe(true);
        expect(xhtml).toContain('<div id="book-columns"><div id="book-inner">');
      }
      const out = await epubText(file, k.data);
      // the text is the source's, to the character, document by document
      expect(out.texts).toEqual(src.texts);
      expect(k.spans.docs.length).toBe(src.index.spine.length);
      for (const [i, d] of k.spans.docs.entries()) {
        expect(d.n, d.path).toBe(src.texts[i]!.length);
        const ids = new Set<string>();
        for (let j = 0; j < d.spans.length; j += 2) {
          const id = d.spans[j] as string;
          const at = d.spans[j + 1] as number;
          expect(ids.has(id)).toBe(false);
          ids.add(id);
          expect(at).toBeGreaterThanOrEqual(j === 0 ? 0 : (d.spans[j - 1] as number));
          // a span begins with text that is not white space in the source at its offset
          expect(src.texts[i]!.slice(at).trim().length, `${d.path} ${id}`).toBeGreaterThan(0);
        }
      }
    } finally {
      zip.close();
    }
  });
});
