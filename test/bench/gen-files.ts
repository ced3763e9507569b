// Small valid book files for the read benchmark's volume: EPUB (2 and 3), CBZ with ComicInfo.xml,
// PDF with an Info dictionary, and the PNG pictures they carry. Written from scratch here so a
// 100,000-item library takes seconds to make; every byte depends only on the input.
import { crc32, deflateSync } from 'node:zlib';

// ---- zip (stored entries: the scanner must read them, nothing needs them small) --------------

/** A zip archive of stored (uncompressed) entries, in the order given, with a fixed timestamp. */
export function zip(entries: [name: string, data: Buffer | string][]): Buffer {
  const DOS_TIME = 0; // 00:00:00
  const DOS_DATE = ((2020 - 1980) << 9) | (1 << 5) | 1; // 2020-01-01
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, raw] of entries) {
    const data = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    const fileName = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += 30 + fileName.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// ---- PNG ----------------------------------------------------------------------------------

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A small RGB picture: a background colour with a band of another, so covers differ. */
export function png(width: number, height: number, bg: [number, number, number], band: [number, number, number]): Buffer {
  const row = 1 + width * 3;
  const raw = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    const c = y > height * 0.4 && y < height * 0.6 ? band : bg;
    for (let x = 0; x < width; x++) raw.set(c, y * row + 1 + x * 3);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

// ---- the books ----------------------------------------------------------------------------

export interface GenBook {
  title: string;
  authors: string[];
  series: string | null;
  seriesIndex: number | null;
  tags: string[];
  language: string;
  publisher: string;
  year: number;
  isbn: string | null;
  uuid: string;
  description: string;
  /** a cover picture, or none */
  cover: Buffer | null;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const CONTAINER = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
`;

const chapter = (b: GenBook) => `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="${b.language}"><head><title>${esc(b.title)}</title></head>
<body><h1>${esc(b.title)}</h1><p>${esc(b.description)}</p></body></html>
`;

/** EPUB 3 (series as belongs-to-collection) or EPUB 2 (series as calibre:series). */
export function epub(b: GenBook, version: 2 | 3): Buffer {
  const cover = b.cover ? `<item id="cover-img" href="cover.png" media-type="image/png"${version === 3 ? ' properties="cover-image"' : ''}/>` : '';
  const creators = b.authors
    .map((a, i) =>
      version === 3
        ? `<dc:creator id="c${i}">${esc(a)}</dc:creator><meta refines="#c${i}" property="role" scheme="marc:relators">aut</meta>`
        : `<dc:creator opf:role="aut">${esc(a)}</dc:creator>`,
    )
    .join('\n    ');
  const series = !b.series
    ? ''
    : version === 3
      ? `<meta property="belongs-to-collection" id="s">${esc(b.series)}</meta><meta refines="#s" property="collection-type">series</meta><meta refines="#s" property="group-position">${b.seriesIndex}</meta>`
      : `<meta name="calibre:series" content="${esc(b.series)}"/><meta name="calibre:series_index" content="${b.seriesIndex}"/>`;
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" xmlns:opf="http://www.idpf.org/2007/opf" version="${version}.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:${b.uuid}</dc:identifier>
    ${b.isbn ? `<dc:identifier>urn:isbn:${b.isbn}</dc:identifier>` : ''}
    <dc:title>${esc(b.title)}</dc:title>
    ${creators}
    <dc:language>${b.language}</dc:language>
    <dc:publisher>${esc(b.publisher)}</dc:publisher>
    <dc:date>${b.year}-01-01</dc:date>
    <dc:description>${esc(b.description)}</dc:description>
    ${b.tags.map((t) => `<dc:subject>${esc(t)}</dc:subject>`).join('')}
    ${version === 3 ? '<meta property="dcterms:modified">2020-01-01T00:00:00Z</meta>' : ''}
    ${series}
    ${b.cover && version === 2 ? '<meta name="cover" content="cover-img"/>' : ''}
  </metadata>
  <manifest>
    ${version === 3 ? '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>' : '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'}
    <item id="ch1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
    ${cover}
  </manifest>
  <spine${version === 2 ? ' toc="ncx"' : ''}><itemref idref="ch1"/></spine>
</package>
`;
  const nav =
    version === 3
      ? `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title></head>
<body><nav epub:type="toc"><ol><li><a href="ch1.xhtml">${esc(b.title)}</a></li></ol></nav></body></html>
`
      : `<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head><meta name="dtb:uid" content="urn:uuid:${b.uuid}"/></head>
<docTitle><text>${esc(b.title)}</text></docTitle><navMap><navPoint id="n1" playOrder="1"><navLabel><text>${esc(b.title)}</text></navLabel><content src="ch1.xhtml"/></navPoint></navMap></ncx>
`;
  const entries: [string, Buffer | string][] = [
    ['mimetype', 'application/epub+zip'], // first and stored, as the OCF spec asks
    ['META-INF/container.xml', CONTAINER],
    ['OEBPS/content.opf', opf],
    [version === 3 ? 'OEBPS/nav.xhtml' : 'OEBPS/toc.ncx', nav],
    ['OEBPS/ch1.xhtml', chapter(b)],
  ];
  if (b.cover) entries.push(['OEBPS/cover.png', b.cover]);
  return zip(entries);
}

/** A CBZ: ComicInfo.xml (unless `bare`, when the file name alone carries the series) and `pages` pictures. */
export function cbz(b: GenBook, pages: Buffer[], bare: boolean): Buffer {
  const info = `<?xml version="1.0" encoding="utf-8"?>
<ComicInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <Title>${esc(b.title)}</Title>
  ${b.series ? `<Series>${esc(b.series)}</Series><Number>${b.seriesIndex}</Number>` : ''}
  <Summary>${esc(b.description)}</Summary>
  <Year>${b.year}</Year>
  <Writer>${esc(b.authors.join(', '))}</Writer>
  <Publisher>${esc(b.publisher)}</Publisher>
  <Genre>${esc(b.tags.join(', '))}</Genre>
  <LanguageISO>${b.language}</LanguageISO>
  <PageCount>${pages.length}</PageCount>
</ComicInfo>
`;
  const entries: [string, Buffer | string][] = pages.map((p, i) => [`page-${String(i + 1).padStart(3, '0')}.png`, p]);
  if (!bare) entries.push(['ComicInfo.xml', info]);
  return zip(entries);
}

/** A PDF string: ASCII as a literal, anything else as UTF-16BE with a byte-order mark. */
function pdfString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/[\\()]/g, (c) => '\\' + c)})`;
  const utf16 = Buffer.from(s, 'utf16le').swap16();
  return `<FEFF${utf16.toString('hex').toUpperCase()}>`;
}

/** A one-page PDF 1.4 whose Info dictionary carries the metadata (pdf.js reads it; pdftoppm renders it). */
export function pdf(b: GenBook): Buffer {
  const text = b.title
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/[\\()]/g, (c) => '\\' + c)
    .slice(0, 60);
  const content = `BT /F1 18 Tf 40 700 Td (${text}) Tj ET`;
  // The language has no standard Info key: pdf.js reads it from XMP's dc:language
  const xmp = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:language><rdf:Bag><rdf:li>${b.language}</rdf:li></rdf:Bag></dc:language><dc:publisher><rdf:Bag><rdf:li>${esc(b.publisher)}</rdf:li></rdf:Bag></dc:publisher></rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="r"?>`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R /Metadata 7 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Title ${pdfString(b.title)} /Author ${pdfString(b.authors.join(' & '))} /Subject ${pdfString(b.description)} /Keywords ${pdfString(b.tags.join(', '))} /Language ${pdfString(b.language)} /CreationDate (D:${b.year}0101000000Z) /Producer (Bindery bench generator) >>`,
    `<< /Type /Metadata /Subtype /XML /Length ${Buffer.byteLength(xmp, 'utf8')} >>\nstream\n${xmp}\nendstream`,
  ];
  return pdfFile(objects, 6);
}

/** A PDF 1.4 file of these objects (numbered from 1; the first is the catalog), with its cross-reference table. */
export function pdfFile(objects: string[], info: number): Buffer {
  let out = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info ${info} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
