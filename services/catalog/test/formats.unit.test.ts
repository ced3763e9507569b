import { describe, expect, it } from 'vitest';
import { formatOf } from '../src/formats';
import { parseComicInfo } from '../src/formats/comic-info';
import { comicLayout } from '../src/formats/comic';
import { fb2Metadata } from '../src/formats/fb2';
import { parsePackage, rootfilePath } from '../src/formats/opf';
import { pdfMetadata } from '../src/formats/pdf-metadata';
import { naturalCompare } from '../src/formats/page-order';
import { htmlToText, normalizeIsbn, splitPersonNames, yearOf } from '../src/formats/text';
import { decodeXml, parseXml, type XmlElement } from '../src/formats/xml';
import { resolveHref } from '../src/formats/zip-path';

const xml = (s: string): XmlElement => parseXml(s)!;

describe('formatOf', () => {
  it('maps book extensions case-insensitively', () => {
    expect(formatOf('a/b/Book.EPUB')).toBe('epub');
    expect(formatOf('Book.kepub.epub')).toBe('epub');
    expect(formatOf('x.pdf')).toBe('pdf');
    expect(formatOf('x.CBZ')).toBe('cbz');
    expect(formatOf('x.cbr')).toBe('cbr');
    expect(formatOf('x.cb7')).toBe('cb7');
    expect(formatOf('x.mobi')).toBe('mobi');
    expect(formatOf('x.azw3')).toBe('azw3');
    expect(formatOf('x.fb2')).toBe('fb2');
    expect(formatOf('x.fb2.zip')).toBe('fb2');
    expect(formatOf('C:\\books\\x.Pdf')).toBe('pdf');
  });
  it('ignores hidden files, AppleDouble companions and other files', () => {
    expect(formatOf('._Book.epub')).toBeNull();
    expect(formatOf('dir/.hidden.epub')).toBeNull();
    expect(formatOf('.epub')).toBeNull();
    expect(formatOf('.DS_Store')).toBeNull();
    expect(formatOf('notes.txt')).toBeNull();
    expect(formatOf('cover.jpg')).toBeNull();
    expect(formatOf('archive.zip')).toBeNull();
    expect(formatOf('epub')).toBeNull();
    expect(formatOf('')).toBeNull();
  });
});

describe('text rules', () => {
  it('sorts page names naturally', () => {
    const names = ['p10.jpg', 'p2.jpg', 'P1.jpg', 'p02b.jpg', 'a/p1.jpg', 'p1.png', 'p001.jpg'];
    expect([...names].sort(naturalCompare)).toEqual(['a/p1.jpg', 'P1.jpg', 'p001.jpg', 'p1.png', 'p2.jpg', 'p02b.jpg', 'p10.jpg']);
    expect(['img100', 'img99', 'img9'].sort(naturalCompare)).toEqual(['img9', 'img99', 'img100']);
  });
  it('normalises ISBNs', () => {
    expect(normalizeIsbn('urn:isbn:978-1-23456-789-7')).toBe('9781234567897');
    expect(normalizeIsbn('ISBN 0-306-40615-x')).toBe('030640615X');
    expect(normalizeIsbn('12345')).toBeNull();
    expect(normalizeIsbn('97812345678971')).toBeNull();
  });
  it('finds years', () => {
    expect(yearOf('1893-07-01')).toBe(1893);
    expect(yearOf('2019')).toBe(2019);
    expect(yearOf('published c. 1901, reprinted')).toBe(1901);
    expect(yearOf('0101-01-01T00:00:00+00:00')).toBeNull();
    expect(yearOf('no date')).toBeNull();
  });
  it('splits author lists conservatively', () => {
    expect(splitPersonNames('John Smith; Jane Doe')).toEqual(['John Smith', 'Jane Doe']);
    expect(splitPersonNames('John Smith & Jane Doe')).toEqual(['John Smith', 'Jane Doe']);
    expect(splitPersonNames('John Smith and Jane Doe')).toEqual(['John Smith', 'Jane Doe']);
    expect(splitPersonNames('Simon & Schuster')).toEqual(['Simon & Schuster']);
    expect(splitPersonNames('Emil Wójcik')).toEqual(['Emil Wójcik']);
  });
  it('turns HTML into text without eating plain angle brackets', () => {
    expect(htmlToText('<p>One&nbsp;two</p><p>Three <b>four</b><br/>five</p>')).toBe('One two\nThree four\nfive');
    expect(htmlToText('Rock & Roll <Live> at "The Cellar"')).toBe('Rock & Roll <Live> at "The Cellar"');
    expect(htmlToText('<script>alert(1)</script>  ')).toBeNull();
  });
  it('resolves hrefs inside an archive', () => {
    expect(resolveHref('OEBPS/', 'images/cover%20art.jpg#x')).toBe('OEBPS/images/cover art.jpg');
    expect(resolveHref('OEBPS/text/', '../images/c.png')).toBe('OEBPS/images/c.png');
    expect(resolveHref('OEBPS/', '../../../../etc/passwd')).toBe('etc/passwd');
    expect(resolveHref('OEBPS/', 'http://example.com/c.jpg')).toBeNull();
  });
  it('decodes XML in its declared encoding', () => {
    const cp1251 = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="windows-1251"?><a>'), Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]), Buffer.from('</a>')]);
    expect(decodeXml(cp1251)).toContain('Привет');
    expect(decodeXml(Buffer.from('\ufeff<a>é</a>', 'utf16le'))).toBe('<a>é</a>');
    expect(decodeXml(Buffer.from('<?xml version="1.0" encoding="x-unknown"?><a>é</a>'))).toContain('<a>é</a>');
  });
});

const EPUB2 = `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
    <dc:title>  The   Title  </dc:title>
    <dc:title>Second title</dc:title>
    <dc:creator opf:role="aut" opf:file-as="Doe, Jane">Jane Doe</dc:creator>
    <dc:creator opf:role="trl">Tom Translator</dc:creator>
    <dc:creator>Anne Author</dc:creator>
    <dc:contributor opf:role="bkp">calibre (6.13.0) [https://calibre-ebook.com]</dc:contributor>
    <dc:contributor opf:role="ill">Ivy Illustrator</dc:contributor>
    <dc:contributor>Carl Helper</dc:contributor>
    <dc:identifier opf:scheme="ISBN">978-0-306-40615-7</dc:identifier>
    <dc:identifier opf:scheme="calibre" id="calibre_id">1234</dc:identifier>
    <dc:identifier id="uid">urn:uuid:0caf8215-48f2-5e97-a808-ac7c9e750901</dc:identifier>
    <dc:date opf:event="modification">2020-01-01</dc:date>
    <dc:date opf:event="publication">1999-05-01</dc:date>
    <dc:language>en-GB</dc:language>
    <dc:publisher>Acme &amp; Co</dc:publisher>
    <dc:subject>Fantasy</dc:subject><dc:subject>Magic</dc:subject><dc:subject>Fantasy</dc:subject>
    <dc:description>&lt;p&gt;First para.&lt;/p&gt;&lt;p&gt;Second &amp;amp; last.&lt;/p&gt;</dc:description>
    <meta name="calibre:series" content="The Saga"/>
    <meta name="calibre:series_index" content="2.5"/>
    <meta name="cover" content="cover-img"/>
  </metadata>
  <manifest>
    <item id="cover-img" href="images/Cover%20Art.jpg" media-type="image/jpeg"/>
    <item id="coverpage" href="text/cover.xhtml" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="coverpage"/></spine>
  <guide><reference type="cover" href="text/cover.xhtml#top" title="Cover"/></guide>
</package>`;

const EPUB3 = `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:title id="t1">The Collection</dc:title>
    <meta refines="#t1" property="title-type">collection</meta>
    <dc:title id="t2">The Main Title</dc:title>
    <meta refines="#t2" property="title-type">main</meta>
    <dc:creator id="c1">Eddie Editor</dc:creator>
    <meta refines="#c1" property="role" scheme="marc:relators">edt</meta>
    <dc:creator id="c2">Alice Author</dc:creator>
    <meta refines="#c2" property="role" scheme="marc:relators">aut</meta>
    <dc:contributor id="c3">Nora Narrator</dc:contributor>
    <meta refines="#c3" property="role" scheme="marc:relators">nrt</meta>
    <dc:identifier id="uid">urn:isbn:9781234567897</dc:identifier>
    <dc:identifier id="i2">0306406152</dc:identifier>
    <meta refines="#i2" property="identifier-type" scheme="onix:codelist5">02</meta>
    <dc:date>2011-09-01T00:00:00Z</dc:date>
    <meta property="belongs-to-collection" id="s0">Some Set</meta>
    <meta refines="#s0" property="collection-type">set</meta>
    <meta property="belongs-to-collection" id="s1">Expanse</meta>
    <meta refines="#s1" property="collection-type">series</meta>
    <meta refines="#s1" property="group-position">3</meta>
    <meta property="dcterms:modified">2023-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="img" href="../cover.png" media-type="image/png" properties="cover-image"/>
    <item id="other-cover" href="images/back-cover.jpg" media-type="image/jpeg"/>
  </manifest>
  <spine page-progression-direction="rtl"/>
</package>`;

describe('OPF', () => {
  it('finds the package document in container.xml', () => {
    expect(rootfilePath(xml('<container><rootfiles><rootfile full-path="a/b.opf" media-type="application/oebps-package+xml"/></rootfiles></container>'))).toBe('a/b.opf');
    expect(rootfilePath(xml('<container><rootfiles/></container>'))).toBeNull();
  });

  it('reads EPUB 2 metadata', () => {
    const { metadata: m, covers } = parsePackage(xml(EPUB2), 'OEBPS/content.opf');
    expect(m.title).toBe('The Title');
    expect(m.contributors).toEqual([
      { name: 'Jane Doe', role: 'author' },
      { name: 'Tom Translator', role: 'translator' },
      { name: 'Anne Author', role: 'author' },
      { name: 'Ivy Illustrator', role: 'illustrator' },
      { name: 'Carl Helper', role: 'contributor' },
    ]);
    expect(m.identifiers).toEqual({ isbn: '9780306406157', calibre: '1234', uuid: '0caf8215-48f2-5e97-a808-ac7c9e750901' });
    expect(m.isbn).toBe('9780306406157');
    expect(m).toMatchObject({
      series: 'The Saga',
      series_index: 2.5,
      year: 1999,
      language: 'en-GB',
      publisher: 'Acme & Co',
      subjects: ['Fantasy', 'Magic'],
      page_count: null,
      reading_direction: null,
    });
    expect(m.description).toBe('First para.\nSecond & last.');
    expect(covers).toEqual([
      { path: 'OEBPS/images/Cover Art.jpg', page: false },
      { path: 'OEBPS/text/cover.xhtml', page: true },
    ]);
  });

  it('reads EPUB 3 metadata with refines', () => {
    const { metadata: m, covers } = parsePackage(xml(EPUB3), 'content.opf');
    expect(m.title).toBe('The Main Title');
    expect(m.contributors).toEqual([
      { name: 'Eddie Editor', role: 'editor' },
      { name: 'Alice Author', role: 'author' },
      { name: 'Nora Narrator', role: 'narrator' },
    ]);
    expect(m.isbn).toBe('9781234567897');
    expect(m).toMatchObject({ series: 'Expanse', series_index: 3, year: 2011, reading_direction: 'rtl' });
    expect(covers[0]).toEqual({ path: 'cover.png', page: false });
    expect(covers).toContainEqual({ path: 'images/back-cover.jpg', page: false });
  });

  it('copes with an almost empty package', () => {
    const { metadata: m, covers } = parsePackage(xml('<package><metadata/></package>'), 'x.opf');
    expect(m.title).toBeNull();
    expect(m.contributors).toEqual([]);
    expect(covers).toEqual([]);
  });
});

const COMIC_INFO = `<?xml version="1.0"?>
<ComicInfo>
  <Title>Issue Title</Title><Series>Hero</Series><Number>4.5</Number><Volume>2016</Volume>
  <Summary>&lt;b&gt;Bold&lt;/b&gt; summary</Summary><Year>2017</Year><LanguageISO>en</LanguageISO>
  <Publisher>Pub</Publisher><Genre>Action, Drama</Genre><Tags>capes,Drama</Tags>
  <Writer>Ann Writer, Bob Writer</Writer><Penciller>Pen Cil</Penciller><Inker>Ink Er</Inker>
  <Colorist>Col Or</Colorist><Letterer>Let Ter</Letterer><CoverArtist>Cov Er</CoverArtist>
  <Editor>Ed It</Editor><Translator>Trans Lator</Translator>
  <Manga>YesAndRightToLeft</Manga><PageCount>3</PageCount>
  <Pages><Page Image="0"/><Page Image="2" Type="FrontCover"/></Pages>
</ComicInfo>`;

describe('ComicInfo', () => {
  it('reads every field we use', () => {
    const info = parseComicInfo(COMIC_INFO)!;
    expect(info.frontCover).toBe(2);
    expect(info.metadata).toMatchObject({
      title: 'Issue Title',
      series: 'Hero',
      series_index: 4.5,
      description: 'Bold summary',
      year: 2017,
      language: 'en',
      publisher: 'Pub',
      subjects: ['Action', 'Drama', 'capes'],
      reading_direction: 'rtl',
    });
    expect(info.metadata.contributors).toEqual([
      { name: 'Ann Writer', role: 'writer' },
      { name: 'Bob Writer', role: 'writer' },
      { name: 'Pen Cil', role: 'penciller' },
      { name: 'Ink Er', role: 'inker' },
      { name: 'Col Or', role: 'colorist' },
      { name: 'Let Ter', role: 'letterer' },
      { name: 'Cov Er', role: 'cover_artist' },
      { name: 'Ed It', role: 'editor' },
      { name: 'Trans Lator', role: 'translator' },
    ]);
  });

  it('lays out pages in natural order, skipping junk, with the marked front cover', () => {
    const names = ['p10.jpg', 'ComicInfo.xml', '__MACOSX/._p1.jpg', '.hidden.jpg', 'p2.JPG', 'P1.jpg', 'notes.txt', 'x/.thumb/p0.jpg'];
    const layout = comicLayout(names, parseComicInfo(COMIC_INFO));
    expect(layout.pages).toEqual(['P1.jpg', 'p2.JPG', 'p10.jpg']);
    expect(layout.coverCandidates).toEqual(['p10.jpg', 'P1.jpg']);
    expect(layout.metadata.page_count).toBe(3);
    expect(comicLayout(names, null).coverCandidates).toEqual(['P1.jpg']);
    expect(() => comicLayout(['ComicInfo.xml'], null)).toThrow('no images in archive');
  });

  it('ignores a document that is not ComicInfo', () => {
    expect(parseComicInfo('this is < not xml >>>')).toBeNull();
    expect(parseComicInfo('<html><title>x</title></html>')).toBeNull();
  });
});

describe('FB2 description', () => {
  it('reads title-info and publish-info', () => {
    const root = xml(`<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0" xmlns:l="http://www.w3.org/1999/xlink"><description>
      <title-info><genre>sf</genre><genre>adventure</genre>
        <author><first-name>Лев</first-name><middle-name>Николаевич</middle-name><last-name>Толстой</last-name></author>
        <author><nickname>anon</nickname></author>
        <translator><first-name>Tr</first-name><last-name>Anslator</last-name></translator>
        <book-title>Война и мир</book-title>
        <annotation><p>Первый.</p><empty-line/><p>Второй &amp; <emphasis>последний</emphasis>.</p></annotation>
        <date value="1869-01-01">1869</date><lang>ru</lang><sequence name="Эпопея" number="1"/>
      </title-info>
      <document-info><id>abc-123</id></document-info>
      <publish-info><publisher>Изд</publisher><year>2001</year><isbn>5-17-012345-X</isbn></publish-info>
    </description></FictionBook>`);
    const m = fb2Metadata(root.children.find((c): c is XmlElement => typeof c !== 'string' && c.name === 'description')!);
    expect(m).toMatchObject({
      title: 'Война и мир',
      language: 'ru',
      series: 'Эпопея',
      series_index: 1,
      year: 1869,
      publisher: 'Изд',
      isbn: '517012345X',
      subjects: ['sf', 'adventure'],
      identifiers: { isbn: '517012345X', fb2: 'abc-123' },
    });
    expect(m.contributors).toEqual([
      { name: 'Лев Николаевич Толстой', role: 'author' },
      { name: 'anon', role: 'author' },
      { name: 'Tr Anslator', role: 'translator' },
    ]);
    expect(m.description).toBe('Первый.\n\nВторой & последний.');
  });
});

describe('PDF metadata', () => {
  it('prefers the Info dictionary and takes the year from XMP dc:date', () => {
    const xmp = new Map<string, unknown>([
      ['dc:date', ['1937-03-02T00:00:00+00:00']],
      ['dc:language', ['fr']],
      ['dc:publisher', ['Faro']],
      ['prism:isbn', '9782894133040'],
      ['dc:title', 'XMP title'],
    ]);
    const m = pdfMetadata({ Title: 'Info title', Author: 'Ann Smith & Bob Jones', Subject: 'About it', Keywords: 'a, b; c', CreationDate: "D:20261122025048+00'00'" }, xmp, 90);
    expect(m).toMatchObject({
      title: 'Info title',
      description: 'About it',
      subjects: ['a', 'b', 'c'],
      year: 1937,
      language: 'fr',
      publisher: 'Faro',
      isbn: '9782894133040',
      page_count: 90,
    });
    expect(m.contributors).toEqual([
      { name: 'Ann Smith', role: 'author' },
      { name: 'Bob Jones', role: 'author' },
    ]);
  });
  it('falls back to XMP and CreationDate', () => {
    const xmp = new Map<string, unknown>([
      ['dc:title', 'XMP title'],
      ['dc:creator', ['A One', 'B Two']],
    ]);
    const m = pdfMetadata({ Title: '  ', CreationDate: 'D:2004' }, xmp, 3);
    expect(m).toMatchObject({ title: 'XMP title', year: 2004 });
    expect(m.contributors.map((c) => c.name)).toEqual(['A One', 'B Two']);
    expect(pdfMetadata({ Title: 42 }, null, 0)).toMatchObject({ title: null, page_count: null });
  });
});
