// EPUB → KEPUB, following kepubify's documented steps: every sentence of a content document's body
// text is wrapped in `<span class="koboSpan" id="kobo.P.S">` (P counts the paragraphs of the file, S
// the sentences of one), the body's content in Kobo's `book-columns` / `book-inner` divs, and Kobo's
// style hack in the head. Only tags are added: the text, entities and every other byte of the source
// stay as written, so a span's offset in the body text is the same number the locator index counts —
// the span map this returns is how a Kobo `Location` (a span id in a file) becomes a canonical
// position and back. Other entries of the archive are copied unchanged (mimetype first, stored).
import { PassThrough } from 'node:stream';
import yazl from 'yazl';
import type { Catalog } from '@bindery/contracts';
import { BookError } from './book-error';
import { MAX_XML_BYTES } from './limits';
import { localName, tagEnd } from './locator-index';
import { decodeEntities } from './text';
import { attr, child, decodeXml, elements, parseXml, type XmlElement } from './xml';
import { openZip, type ZipArchive } from './zip';
import { dirOf, resolveHref } from './zip-path';

/** The format of the file and its span map (stored with the cached file; an older one is made again). 2: no class on the style hack */
export const KEPUB_VERSION = 2;
/** the largest entry copied into a KEPUB (a bigger one makes the book unconvertible) */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024;
/** a content document larger than this is copied without spans */
const MAX_DOC_BYTES = 16 * 1024 * 1024;

/** Per spine item (non-linear ones included, spine order): where its spans start in its body text. */
export type KepubDoc = Catalog.KepubDoc;
export type SpanMap = Catalog.SpanMap;

export interface Kepub {
  data: Buffer;
  spans: SpanMap;
}

const SKIP = new Set(['script', 'style', 'svg', 'math', 'textarea', 'head', 'title', 'noscript']);
const BLOCK = new Set(
  'address article aside blockquote body dd details div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section table td th tr ul br'.split(' '),
);
const NAME = /^[A-Za-z_][\w.:-]*/;
/** entries stored as they are in a KEPUB (already compressed formats) */
const PACKED = /\.(jpe?g|png|gif|webp|avif|woff2?|mp3|m4a|mp4|ogg|opus|zip)$/i;
// no class or id on it: XHTML 1.1 (an EPUB 2's documents) allows neither on <style>
const STYLE_HACK = '<style type="text/css">div#book-inner { margin-top: 0; margin-bottom: 0; }</style>';
/** a sentence ends after its punctuation (and closing quotes or brackets) and the white space after it */
const SENTENCE_END = /[.!?\u2026\u3002\uff01\uff1f]+["'\u201d\u2019\u00bb)\]]*\s+/g;

/** the UTF-16 length of raw character data as the locator index counts it (CRLF is one, entities decoded) */
const textLength = (raw: string) => (raw.includes('&') || raw.includes('\r') ? decodeEntities(raw.replace(/\r\n?/g, '\n')).length : raw.length);

/** Splits raw character data after each sentence's end; the pieces join back to the input. */
export function sentences(raw: string): string[] {
  const out: string[] = [];
  let from = 0;
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(raw); m; m = SENTENCE_END.exec(raw)) {
    const end = m.index + m[0].length;
    if (end > from && end < raw.length) {
      out.push(raw.slice(from, end));
      from = end;
    }
  }
  if (from < raw.length) out.push(raw.slice(from));
  return out;
}

/**
 * One content document with spans and wrapper divs; null when it has no body to convert (left as is).
 * Offsets of the spans count the body's text the way `indexDocument` (locator-index.ts) does.
 */
export function kepubDocument(src: string): { xhtml: string; n: number; spans: (string | number)[] } | null {
  if (/class\s*=\s*["'][^"']*\bkoboSpan\b/.test(src)) return null; // already a KEPUB's document
  const out: string[] = [];
  const spans: (string | number)[] = [];
  const stack: string[] = [];
  let inBody = false;
  let bodyDepth = 0;
  let skip = 0;
  let para = 0;
  let sentence = 0;
  let fresh = true;
  let n = 0;
  let sawBody = false;
  let i = 0;
  const L = src.length;
  const text = (raw: string) => {
    if (!inBody || skip > 0 || /^[ \t\r\n]*$/.test(raw)) {
      if (inBody) n += textLength(raw);
      out.push(raw);
      return;
    }
    if (fresh) {
      para++;
      sentence = 0;
      fresh = false;
    }
    for (const piece of sentences(raw)) {
      sentence++;
      const id = `kobo.${para}.${sentence}`;
      spans.push(id, n);
      out.push(`<span class="koboSpan" id="${id}">`, piece, '</span>');
      n += textLength(piece);
    }
  };
  while (i < L) {
    const lt = src.indexOf('<', i);
    if (lt < 0) {
      text(src.slice(i));
      break;
    }
    if (lt > i) text(src.slice(i, lt));
    let end: number;
    if (src.startsWith('<!--', lt)) {
      const e = src.indexOf('-->', lt + 4);
      end = e < 0 ? L : e + 3;
    } else if (src.startsWith('<![CDATA[', lt)) {
      const e = src.indexOf(']]>', lt + 9);
      end = e < 0 ? L : e + 3;
      if (inBody) n += (e < 0 ? L : e) - (lt + 9); // character data as written, never in a span
    } else if (src.startsWith('<?', lt)) {
      const e = src.indexOf('?>', lt + 2);
      end = e < 0 ? L : e + 2;
    } else if (src.startsWith('<!', lt)) {
      const e = src.indexOf('>', lt + 2);
      end = e < 0 ? L : e + 1;
    } else {
      const gt = tagEnd(src, lt + 1);
      if (gt < 0) {
        out.push(src.slice(lt));
        break;
      }
      end = gt + 1;
      const inner = src.slice(lt + 1, gt);
      const closing = inner.startsWith('/');
      const m = NAME.exec(closing ? inner.slice(1).trim() : inner);
      if (!m) {
        // a stray "<" is text to a reader (and to the locator index)
        text(src.slice(lt, end));
        i = end;
        continue;
      }
      const name = localName(m[0]);
      if (closing) {
        const at = stack.lastIndexOf(name);
        if (at >= 0) {
          while (stack.length > at) {
            const gone = stack.pop()!;
            if (SKIP.has(gone)) skip--;
            if (BLOCK.has(gone)) fresh = true;
          }
          if (name === 'body' && inBody) {
            inBody = false;
            out.push('</div></div>');
          } else if (inBody && stack.length < bodyDepth) inBody = false;
        }
        if (name === 'head') out.push(STYLE_HACK);
        out.push(src.slice(lt, end));
        i = end;
        continue;
      }
      const selfClosing = inner.endsWith('/');
      out.push(src.slice(lt, end));
      if (BLOCK.has(name)) fresh = true;
      if (name === 'body' && !sawBody) {
        sawBody = true;
        if (selfClosing) return null;
        stack.push(name);
        inBody = true;
        bodyDepth = stack.length;
        out.push('<div id="book-columns"><div id="book-inner">');
        i = end;
        continue;
      }
      if (!selfClosing && !/^(area|base|br|col|embed|hr|img|input|link|meta|param|source|track|wbr)$/.test(name)) {
        stack.push(name);
        if (SKIP.has(name)) skip++;
      }
      i = end;
      continue;
    }
    out.push(src.slice(lt, end));
    i = end;
  }
  if (!sawBody) return null;
  if (inBody) out.push('</div></div>'); // a truncated body: close what we opened
  return { xhtml: out.join(''), n, spans };
}

async function packageOf(zip: ZipArchive): Promise<{ pkg: XmlElement; opfPath: string }> {
  const c = zip.find('META-INF/container.xml');
  const container = c && parseXml(decodeXml(await zip.read(c, MAX_XML_BYTES)));
  const rootfile = container && elements(child(container, 'rootfiles'), 'rootfile')[0];
  const opfPath = rootfile && attr(rootfile, 'full-path');
  const opf = opfPath ? zip.find(opfPath) : null;
  const pkg = opf && parseXml(decodeXml(await zip.read(opf, MAX_XML_BYTES)));
  if (!opf || pkg?.name !== 'package') throw new BookError('not a valid EPUB: no package document');
  return { pkg, opfPath: opf.fileName };
}

/** Converts an EPUB (its bytes) to a KEPUB with the span map of every spine item. */
/** the time written for a `mimetype` entry the EPUB lacked */
const FIXED_TIME = new Date(Date.UTC(2000, 0, 1));

export async function convertToKepub(bytes: Buffer): Promise<Kepub> {
  const zip = await openZip('book.epub', 'EPUB', bytes);
  try {
    const { pkg, opfPath } = await packageOf(zip);
    const base = dirOf(opfPath);
    const manifest = new Map<string, { href: string; type: string }>();
    for (const item of elements(child(pkg, 'manifest'), 'item')) {
      const id = attr(item, 'id')?.trim();
      const href = attr(item, 'href')?.trim();
      if (id && href) manifest.set(id, { href, type: (attr(item, 'media-type') ?? '').trim().toLowerCase() });
    }
    const converted = new Map<string, { xhtml: string; n: number; spans: (string | number)[] } | null>();
    const docs: KepubDoc[] = [];
    for (const ref of elements(child(pkg, 'spine'), 'itemref')) {
      const m = manifest.get(attr(ref, 'idref')?.trim() ?? '');
      if (!m) continue;
      const path = resolveHref(base, m.href) ?? m.href;
      if (!converted.has(path)) {
        const entry = zip.find(path);
        let doc: ReturnType<typeof kepubDocument> = null;
        if (entry && (m.type === '' || m.type.includes('html')) && entry.uncompressedSize <= MAX_DOC_BYTES) doc = kepubDocument(decodeXml(await zip.read(entry, MAX_DOC_BYTES)));
        converted.set(path, doc);
      }
      const d = converted.get(path);
      docs.push({ href: m.href, path: zip.find(path)?.fileName ?? path, n: d?.n ?? 0, spans: d?.spans ?? [] });
    }
    const out = new yazl.ZipFile();
    const mimetype = zip.find('mimetype');
    // every entry keeps its time from the EPUB (yazl would stamp "now"): the same book gives the same bytes
    out.addBuffer(mimetype ? await zip.read(mimetype, 1024) : Buffer.from('application/epub+zip'), 'mimetype', {
      compress: false,
      mtime: mimetype?.getLastModDate() ?? FIXED_TIME,
    });
    for (const e of zip.entries) {
      if (e.fileName === 'mimetype') continue;
      const d = converted.get(e.fileName);
      // pictures, fonts and media are compressed already: deflating them again costs time and saves nothing
      out.addBuffer(d ? Buffer.from(d.xhtml, 'utf8') : await zip.read(e, MAX_ENTRY_BYTES), e.fileName, {
        compress: Boolean(d) || !PACKED.test(e.fileName),
        mtime: e.getLastModDate(),
      });
    }
    out.end();
    const chunks: Buffer[] = [];
    const sink = out.outputStream.pipe(new PassThrough());
    for await (const c of sink) chunks.push(c as Buffer);
    return { data: Buffer.concat(chunks), spans: { v: KEPUB_VERSION, docs } };
  } finally {
    zip.close();
  }
}
