// The locator index of one document and the conversions over it, on hand-made XHTML: the EPUB CFI
// specification's example, runs of text across comments and entities, line ends, characters beyond
// the BMP in KOReader's code-point offsets, white space KOReader drops, odd ids in selectors, and
// hostile notations that must come back as null or healed, never as an exception.
import { describe, expect, it } from 'vitest';
import { indexDocument } from '../src/formats/locator-index';
import * as L from '@bindery/locator';

function book(...bodies: string[]): L.LocatorIndex {
  const names: string[] = [];
  const ids = new Map<string, number>();
  const docs = bodies.map((b) => indexDocument(`<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>${b}</html>`, names, ids));
  return { v: 1, names, spine: bodies.map((_, i) => [`c${i + 1}`, `c${i + 1}.xhtml`, 1]), docs };
}

describe('locator index of a document', () => {
  it("reads the CFI specification's example", () => {
    const idx = book('<body id="body01"><p>a</p><p>b</p><p>c</p><p>d</p><p id="para05">xxx<em>yyy</em>0123456789</p><img id="svgimg" src="x.svg"/></body>');
    const r = L.cfiToCanonical(idx, 'epubcfi(/6/2[c1]!/4[body01]/10[para05]/3:10)')!;
    // a b c d xxx yyy, then ten digits: the end of the paragraph
    expect(r).toEqual({ pos: { spine: 0, offset: 20 }, healed: [] });
    expect(L.canonicalToCfi(idx, { spine: 0, offset: 15 })).toBe('epubcfi(/6/2[c1]!/4[body01]/10[para05]/3:5)');
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 15 })).toBe('/body/DocFragment[1]/body/p[5]/text()[2].5');
    expect(L.canonicalToRestore(idx, { spine: 0, offset: 15 })).toEqual({ anchor_href: 'c1.xhtml', css_selector: '#para05', char_offset: 11 });
  });

  it('counts entities as what they decode to, CRLF as one, and does not split a CFI run at a comment (crengine does)', () => {
    const idx = book('<body><p>A&amp;B<!-- note -->C\r\nD&#x1F409;E</p></body>');
    expect(idx.docs[0]!.n).toBe('A&BC\nD🐉E'.length);
    expect(L.canonicalToCfi(idx, { spine: 0, offset: 4 })).toBe('epubcfi(/6/2[c1]!/4/2/1:4)');
    // after the E: 9 UTF-16 units into the run; crengine's second node "C D🐉E" is 5 code points
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 9 })).toBe('/body/DocFragment[1]/body/p/text()[2].5');
    expect(L.xpointerToCanonical(idx, '/body/DocFragment[1]/body/p/text()[2].5')).toEqual({ pos: { spine: 0, offset: 9 }, healed: [] });
    expect(L.xpointerToCanonical(idx, '/body/DocFragment[1]/body/p/text()[1].3')).toEqual({ pos: { spine: 0, offset: 3 }, healed: [] });
  });

  it('leaves out of XPointers the white space between blocks, and keeps it between inline elements', () => {
    const idx = book('<body>\n  <div>\n    <p><b>one</b> <i>two</i></p>\n  </div>\n</body>');
    const at = idx.docs[0]!.n - '\n  \n'.length - 'two'.length; // the start of "two"
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: at })).toBe('/body/DocFragment[1]/body/div/p/i/text().0');
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: at - 1 })).toBe('/body/DocFragment[1]/body/div/p/text().0');
    // white space between blocks lands on the next text KOReader keeps
    expect(L.canonicalToXPointer(idx, { spine: 0, offset: 0 })).toBe('/body/DocFragment[1]/body/div/p/b/text().0');
  });

  it('escapes ids in selectors and finds them again', () => {
    const idx = book('<body><p id="1 a&gt;b">text</p><div><p>x</p><p>yz</p></div></body>');
    const h = L.canonicalToRestore(idx, { spine: 0, offset: 2 });
    expect(h.css_selector).toBe('#\\31 \\ a\\>b');
    expect(L.restoreToCanonical(idx, h)).toEqual({ pos: { spine: 0, offset: 2 }, healed: [] });
    expect(L.canonicalToRestore(idx, { spine: 0, offset: 6 }).css_selector).toBe('body > div:nth-child(2) > p:nth-child(2)');
  });

  it('takes an id only from the id attribute, never from text inside another attribute', () => {
    const idx = book(`<body><p title="a id='fake' b" class='x'>one</p><p data-x=" id=&quot;no&quot;" xml:id="real">two</p></body>`);
    expect(L.canonicalToRestore(idx, { spine: 0, offset: 1 }).css_selector).toBe('body > p:nth-child(1)');
    expect(L.canonicalToRestore(idx, { spine: 0, offset: 4 }).css_selector).toBe('#real');
  });

  it('maps percentages both ways, every document weighing its text', () => {
    const idx = book('<body><p>12345</p></body>', '<body><img src="x.png"/></body>', '<body><p>1234</p></body>');
    expect(L.canonicalToPercentage(idx, { spine: 2, offset: 0 })).toBeCloseTo(6 / 10, 6);
    expect(L.percentageToCanonical(idx, 0.6)).toEqual({ spine: 2, offset: 0 });
    expect(L.percentageToCanonical(idx, 1)).toEqual({ spine: 2, offset: 4 });
    expect(L.pageToFraction(1, 9)).toBe(0);
    expect(L.fractionToPage(0.5, 9)).toBe(5);
  });

  it('never throws on hostile notations', () => {
    const idx = book('<body><p id="a">text</p></body>');
    const junk = [
      '',
      '/',
      'epubcfi(',
      'epubcfi(/6/2!/4/99999999999/1:5)',
      'epubcfi(/6/2[^]!/4)',
      '/body/DocFragment[0]',
      '/body/DocFragment[2]',
      '/body/DocFragment[1]/body/p[999]/text()[5].9',
      '/body/DocFragment[1]/body/p/text().99999999999',
      '\u0000'.repeat(5000),
    ];
    for (const j of junk) {
      expect(() => L.cfiToCanonical(idx, j)).not.toThrow();
      expect(() => L.xpointerToCanonical(idx, j)).not.toThrow();
      expect(() => L.restoreToCanonical(idx, { anchor_href: j, css_selector: j, char_offset: 3 })).not.toThrow();
    }
    expect(L.cfiToCanonical(idx, 'epubcfi(/6/2[c1]!/4/2[a]/1:500)')!.healed).toEqual([
      { code: 'offset-past-end', message: 'epubcfi: character offset 500 is past the end of its text (4 characters); moved to its end' },
    ]);
    expect(L.xpointerToCanonical(idx, '/body/DocFragment[3]/body/p/text().0')!.healed).toEqual([
      { code: 'spine-past-end', message: 'xpointer: DocFragment[3] is past the end of the spine (1 item); moved to the end of the book' },
    ]);
    expect(L.restoreToCanonical(idx, { anchor_href: 'c1.xhtml', css_selector: 'p:hover' })!.healed).toEqual([
      { code: 'selector-missing', message: 'css_selector: p:hover was not found in c1.xhtml; moved to the start of the document' },
    ]);
    expect(L.cfiToCanonical(idx, 'epubcfi(/6/40!/4/2/1:0)')!.healed).toEqual([
      { code: 'spine-past-end', message: 'epubcfi: spine step 40 is past the end of the spine (1 item); moved to the end of the book' },
    ]);
  });
});

describe('CFI ranges (highlights)', () => {
  const idx = book('<body><p id="a">abcdefgh</p><p>ijkl<em>mn</em>op</p></body>', '<body><p>second</p></body>');

  it('writes a span as a range with the longest common parent, and reads both ends back', () => {
    const within = L.canonicalToCfiRange(idx, { spine: 0, offset: 2 }, { spine: 0, offset: 6 });
    expect(within).toBe('epubcfi(/6/2[c1]!/4/2[a],/1:2,/1:6)');
    const across = L.canonicalToCfiRange(idx, { spine: 0, offset: 3 }, { spine: 0, offset: 13 });
    expect(across).toBe('epubcfi(/6/2[c1]!/4,/2[a]/1:3,/4/2/1:1)');
    const docs = L.canonicalToCfiRange(idx, { spine: 0, offset: 3 }, { spine: 1, offset: 2 });
    expect(docs).toBe('epubcfi(/6,/2[c1]!/4/2[a]/1:3,/4[c2]!/4/2/1:2)');
    expect(L.canonicalToCfiRange(idx, { spine: 1, offset: 2 }, { spine: 1, offset: 2 })).toBe(L.canonicalToCfi(idx, { spine: 1, offset: 2 }));
    for (const [cfi, start, end] of [
      [within, 2, 6],
      [across, 3, 13],
    ] as const) {
      const p = L.parseCfi(cfi)!;
      expect(p.healed.map((h) => h.code)).toEqual(['cfi-range']);
      expect(L.cfiToCanonical(idx, p)!.pos).toEqual({ spine: 0, offset: start });
      expect(L.cfiToCanonical(idx, p.end!)).toEqual({ pos: { spine: 0, offset: end }, healed: [] });
    }
    const d = L.parseCfi(docs)!;
    expect(L.cfiToCanonical(idx, d.end!)!.pos).toEqual({ spine: 1, offset: 2 });
  });
});
