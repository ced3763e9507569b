// Small books whose pages the OPDS page stream serves, written for the tests: a CBR (stored RAR),
// a CBZ with a WebP page, a PDF of several pages, an image-only EPUB and an EPUB with text.
import { writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { pdfFile } from '../bench/gen-files';
import { makeEpub } from '../../services/catalog/test/fixtures/books';
import { buildRar } from '../../services/catalog/test/fixtures/rar-writer';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';

// sharp is the gateway's dependency; resolved from there rather than added to the root
// sharp's types are not visible from the repository root: the calls used here, loosely
type Sharp = (input?: unknown) => any;
const sharp = createRequire(join(ROOT, 'services/gateway/package.json'))('sharp') as Sharp;
const image = (w: number, h: number, color: string) => sharp({ create: { width: w, height: h, channels: 3, background: color } });
export const jpegPage = (w: number, h: number, color: string) => image(w, h, color).jpeg().toBuffer();
export const pngPage = (w: number, h: number, color: string) => image(w, h, color).png().toBuffer();
export const webpPage = (w: number, h: number, color: string) => image(w, h, color).webp().toBuffer();

/** A PDF 1.4 of `pages` pages, each with its number written on it; the Info dictionary names it. */
export function multiPagePdf(title: string, pages: number): Buffer {
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', ''];
  const kids: number[] = [];
  const font = 3;
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let i = 0; i < pages; i++) {
    const content = `BT /F1 48 Tf 100 400 Td (Page ${i + 1}) Tj ET`;
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    const contentId = objects.length;
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] /Contents ${contentId} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`);
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${pages} >>`;
  objects.push(`<< /Title (${title}) /Author (Page Tester) >>`);
  return pdfFile(objects, objects.length);
}

/**
 * A PDF 1.4 whose pages carry the given lines of text (Helvetica, 24 pt, from the top left of an
 * A5-sized page), or, for a page given as null, only a drawn grey block and no text at all (as a
 * scan without OCR). Lines must not hold parentheses or backslashes.
 */
export function textPdf(title: string, pages: (string[] | null)[]): Buffer {
  const objects: string[] = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'];
  const kids: number[] = [];
  for (const lines of pages) {
    const content = lines ? `BT /F1 24 Tf 50 540 Td 30 TL ${lines.map((l) => `(${l}) Tj T*`).join(' ')} ET` : '0.5 g 40 40 340 515 re f';
    objects.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] /Contents ${objects.length} 0 R /Resources << /Font << /F1 3 0 R >> >> >>`);
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects.push(`<< /Title (${title}) /Author (Page Tester) >>`);
  return pdfFile(objects, objects.length);
}

const opf = (title: string, items: string, spine: string) =>
  `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">` +
  `<dc:identifier id="id">urn:uuid:${title.length}-page-test</dc:identifier><dc:title>${title}</dc:title><dc:creator>Page Tester</dc:creator><dc:language>en</dc:language></metadata>` +
  `<manifest>${items}</manifest><spine>${spine}</spine></package>`;

const xhtml = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:svg="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"><head><title>p</title></head><body>${body}</body></html>`;

/** An EPUB whose spine is one picture per page: `<img>`, SVG `<image>`, and an image itemref. */
export function imageOnlyEpub(title: string, pages: Buffer[]): Buffer {
  const items: string[] = [];
  const spine: string[] = [];
  const files: { name: string; data: Buffer | string; deflate?: boolean }[] = [];
  pages.forEach((p, i) => {
    const img = `images/p${i + 1}.jpg`;
    files.push({ name: `OEBPS/${img}`, data: p });
    items.push(`<item id="img${i}" href="${img}" media-type="image/jpeg"/>`);
    if (i === 2) {
      // an image straight in the spine
      spine.push(`<itemref idref="img${i}"/>`);
      return;
    }
    const body =
      i === 1
        ? `<svg:svg width="100%" height="100%" viewBox="0 0 60 90"><svg:image width="60" height="90" xlink:href="../${img}"/></svg:svg>`
        : `<div class="page">\n  <img src="../${img}" alt=""/>\n</div>`;
    files.push({ name: `OEBPS/pages/p${i + 1}.xhtml`, data: xhtml(body), deflate: true });
    items.push(`<item id="page${i}" href="pages/p${i + 1}.xhtml" media-type="application/xhtml+xml"/>`);
    spine.push(`<itemref idref="page${i}"/>`);
  });
  return makeEpub(opf(title, items.join(''), spine.join('')), files);
}

/**
 * An image-only EPUB written the ways that once split the catalog's rule from the gateway's own
 * pattern-matching copy of it: a page with an old picture left in a comment (the copy counted two
 * pictures and served no page), pictures wrapped in SVG with an empty `<p>` of whitespace, a
 * page with a no-break space and its picture in a subfolder named relative to the page.
 */
export function framedEpub(title: string, pages: Buffer[]): Buffer {
  const files: { name: string; data: Buffer | string; deflate?: boolean }[] = [];
  const items: string[] = [];
  const spine: string[] = [];
  const bodies = [
    (img: string) => `<!-- the first scan: <img src="../${img.replace('.jpg', '-old.jpg')}" alt=""/> -->\n<div class="page"><img src="../${img}" alt=""/></div>`,
    (img: string) => `<p> </p><svg:svg viewBox="0 0 60 90"><svg:title>page</svg:title><svg:image width="60" height="90" xlink:href="../${img}"/></svg:svg><p>\n\t</p>`,
    (img: string) => `<p>&#160;</p><div><img src="./../${img}" alt=""/></div>`,
  ];
  pages.forEach((p, i) => {
    const img = `art/scan ${i + 1}.jpg`;
    files.push({ name: `OEBPS/${img}`, data: p });
    items.push(`<item id="img${i}" href="${img.replace(' ', '%20')}" media-type="image/jpeg"/>`);
    files.push({ name: `OEBPS/text/p${i + 1}.xhtml`, data: xhtml(bodies[i % bodies.length]!(img.replace(' ', '%20'))), deflate: true });
    items.push(`<item id="page${i}" href="text/p${i + 1}.xhtml" media-type="application/xhtml+xml"/>`);
    spine.push(`<itemref idref="page${i}"/>`);
  });
  return makeEpub(opf(title, items.join(''), spine.join('')), files);
}

/** An EPUB with a cover picture and then text: not streamed. */
export function textEpub(title: string, cover: Buffer): Buffer {
  const items = `<item id="c" href="cover.jpg" media-type="image/jpeg"/><item id="p0" href="cover.xhtml" media-type="application/xhtml+xml"/><item id="p1" href="text.xhtml" media-type="application/xhtml+xml"/>`;
  return makeEpub(opf(title, items, '<itemref idref="p0"/><itemref idref="p1"/>'), [
    { name: 'OEBPS/cover.jpg', data: cover },
    { name: 'OEBPS/cover.xhtml', data: xhtml('<img src="cover.jpg" alt=""/>'), deflate: true },
    { name: 'OEBPS/text.xhtml', data: xhtml('<p>Once upon a time there was a page with words.</p>'), deflate: true },
  ]);
}

export interface PageBooks {
  /** file name → pages it holds */
  cbr: { title: string; pages: number; webpAt: number };
  cbz: { title: string; pages: number; webpAt: number };
  pdf: { title: string; pages: number };
  epub: { title: string; pages: number };
  /** an image-only EPUB the gateway's former copy of the rule read differently; its page images, in order */
  framed: { title: string; images: Buffer[] };
  text: { title: string };
}

/** Writes the books into `dir` and says what they hold. */
export async function writePageBooks(dir: string): Promise<PageBooks> {
  mkdirSync(join(dir, 'comics'), { recursive: true });
  mkdirSync(join(dir, 'books'), { recursive: true });
  const rarPages = [
    { name: 'Page 001.jpg', data: await jpegPage(600, 900, '#a33') },
    { name: 'Page 002.webp', data: await webpPage(600, 900, '#3a3') },
    { name: 'Page 003.png', data: await pngPage(600, 900, '#33a') },
    { name: 'Page 010.jpg', data: await jpegPage(600, 900, '#aa3') },
  ];
  writeFileSync(
    join(dir, 'comics/Rar Comic.cbr'),
    buildRar([{ name: 'ComicInfo.xml', data: '<ComicInfo><Title>Rar Comic</Title><Writer>Page Tester</Writer></ComicInfo>' }, ...rarPages]),
  );
  writeFileSync(
    join(dir, 'comics/Zip Comic.cbz'),
    buildZip([
      { name: 'ComicInfo.xml', data: '<ComicInfo><Title>Zip Comic</Title><Writer>Page Tester</Writer></ComicInfo>' },
      { name: '01.jpg', data: await jpegPage(500, 700, '#111') },
      { name: '02.webp', data: await webpPage(500, 700, '#222') },
    ]),
  );
  writeFileSync(join(dir, 'books/Three Pages.pdf'), multiPagePdf('Three Pages', 3));
  writeFileSync(
    join(dir, 'books/Picture Book.epub'),
    imageOnlyEpub('Picture Book', [await jpegPage(60, 90, '#c00'), await jpegPage(60, 90, '#0c0'), await jpegPage(60, 90, '#00c')]),
  );
  writeFileSync(join(dir, 'books/Words Book.epub'), textEpub('Words Book', await jpegPage(60, 90, '#888')));
  const framed = [await jpegPage(60, 90, '#d22'), await jpegPage(60, 90, '#2d2'), await jpegPage(60, 90, '#22d')];
  writeFileSync(join(dir, 'books/Framed Book.epub'), framedEpub('Framed Book', framed));
  return {
    cbr: { title: 'Rar Comic', pages: 4, webpAt: 1 },
    cbz: { title: 'Zip Comic', pages: 2, webpAt: 1 },
    pdf: { title: 'Three Pages', pages: 3 },
    epub: { title: 'Picture Book', pages: 3 },
    framed: { title: 'Framed Book', images: framed },
    text: { title: 'Words Book' },
  };
}
