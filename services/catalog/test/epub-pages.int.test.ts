// Image-only EPUBs (comics and manga made into EPUBs) get a page count, so the gateway can stream
// their pages; an EPUB with text keeps none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extract } from '../src/formats';
import { jpeg, makeEpub } from './fixtures/books';

const tmp = mkdtempSync(join(tmpdir(), 'bindery-epub-pages-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const opf = (items: string, spine: string) =>
  `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Pictures</dc:title></metadata><manifest>${items}</manifest><spine>${spine}</spine></package>`;
const page = (body: string) =>
  `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:svg="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><head><title>t</title><style>p{}</style></head><body>${body}</body></html>`;

async function pages(bodies: string[], imageItem = false): Promise<number | null> {
  return (await read(bodies, imageItem)).metadata.page_count;
}

async function read(bodies: string[], imageItem = false) {
  const img = await jpeg(10, 10);
  const files = [{ name: 'OEBPS/img/a.jpg', data: img }, ...bodies.map((b, i) => ({ name: `OEBPS/p${i}.xhtml`, data: page(b) }))];
  const items = `<item id="a" href="img/a.jpg" media-type="image/jpeg"/>${bodies.map((_, i) => `<item id="p${i}" href="p${i}.xhtml" media-type="application/xhtml+xml"/>`).join('')}`;
  const spine = `${bodies.map((_, i) => `<itemref idref="p${i}"/>`).join('')}${imageItem ? '<itemref idref="a"/>' : ''}<itemref idref="p0" linear="no"/>`;
  const path = join(tmp, `${Math.random().toString(36).slice(2)}.epub`);
  writeFileSync(path, makeEpub(opf(items, spine), files));
  return extract(path, 'epub');
}

describe('image-only EPUB', () => {
  it('counts one page per picture: <img>, SVG <image>, an image in the spine; non-linear items left out', async () => {
    expect(await pages(['<div><img src="img/a.jpg" alt=""/></div>', '<svg:svg><svg:image xlink:href="img/a.jpg"/></svg:svg>'], true)).toBe(3);
  });
  it('records the page entries in spine order, whatever wraps them: the list the gateway streams', async () => {
    const x = await read(
      [
        '<!-- <img src="img/old.jpg"/> --><p> </p><div><img src="./img/a.jpg"/></div>',
        '<svg:svg><svg:title>t</svg:title><svg:image xlink:href="img/a.jpg"/></svg:svg><p>&#160;</p>',
      ],
      true,
    );
    expect(x.pages).toEqual(['OEBPS/img/a.jpg', 'OEBPS/img/a.jpg', 'OEBPS/img/a.jpg']);
    expect(x.metadata.page_count).toBe(3);
    expect((await read(['<p>Words</p>'])).pages).toBeNull();
  });
  it('counts nothing for an EPUB with text, two pictures on a page, or a picture outside the book', async () => {
    expect(await pages(['<img src="img/a.jpg"/>', '<p>Chapter one</p>'])).toBeNull();
    expect(await pages(['<img src="img/a.jpg"/><img src="img/a.jpg"/>'])).toBeNull();
    expect(await pages(['<img src="img/missing.jpg"/>'])).toBeNull();
    expect(await pages(['<img src="http://example.com/a.jpg"/>'])).toBeNull();
  });
});
