// A simulated Kobo for the end-to-end tests: small EPUBs made on the spot (a stored ZIP, no library
// needed), a store client that follows the sync token and the `continue` header as the device does,
// and the KoboSpans of a downloaded KEPUB.
import { randomUUID } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import { expect } from 'vitest';
import type { Call } from './helpers';
import type { Res } from '../support/http';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';

/** A zip of stored (uncompressed) entries, in order: EPUBs put `mimetype` first, uncompressed. */
export function storedZip(entries: [string, string | Buffer][]): Buffer {
  return buildZip(entries.map(([name, data]) => ({ name, data })));
}

/** A small valid EPUB 3 with a title, an author and a few sentences. */
export function smallEpub(
  title: string,
  author: string,
  uid: string,
  text = 'It begins here. It goes on for a while. Then it ends.',
  series?: { name: string; index: number },
): Buffer {
  const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const inSeries = series ? `<meta name="calibre:series" content="${x(series.name)}"/><meta name="calibre:series_index" content="${series.index}"/>` : '';
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:${uid}</dc:identifier><dc:title>${x(title)}</dc:title><dc:creator>${x(author)}</dc:creator><dc:language>en</dc:language><meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>${inSeries}</metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
    ],
    [
      'OEBPS/nav.xhtml',
      '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Nav</title></head><body><nav epub:type="toc"><ol><li><a href="c1.xhtml">One</a></li></ol></nav></body></html>',
    ],
    [
      'OEBPS/c1.xhtml',
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${x(title)}</title></head><body><h1>${x(title)}</h1><p>${x(text)}</p></body></html>`,
    ],
  ]);
}

/** The entries of a ZIP (stored or deflated), by name. */
/** An EPUB of about `bytes` of text in `chapters` chapters of many paragraphs (the benchmarks' big book). */
export function bigEpub(bytes: number, chapters = 1): Buffer {
  const para = '<p>It was a quiet evening. The lamps were lit one by one; nobody spoke. Then the bell rang, twice!</p>\n';
  const body = para.repeat(Math.ceil(bytes / chapters / para.length));
  const ids = Array.from({ length: chapters }, (_, i) => `c${i + 1}`);
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:${randomUUID()}</dc:identifier><dc:title>Big Book</dc:title><dc:language>en</dc:language></metadata><manifest>${ids.map((id) => `<item id="${id}" href="${id}.xhtml" media-type="application/xhtml+xml"/>`).join('')}</manifest><spine>${ids.map((id) => `<itemref idref="${id}"/>`).join('')}</spine></package>`,
    ],
    ...ids.map((id, i): [string, string] => [
      `OEBPS/${id}.xhtml`,
      `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Chapter ${i + 1}</title></head><body><h1>Chapter ${i + 1}</h1>${body}</body></html>`,
    ]),
  ]);
}

export function unzip(zip: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let p = zip.readUInt32LE(end + 16);
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(p + 10);
    const size = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extra = zip.readUInt16LE(p + 30);
    const comment = zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + size);
    out.set(name, method === 0 ? raw : inflateRawSync(raw));
    p += 46 + nameLen + extra + comment;
  }
  return out;
}

/** Every KoboSpan of a KEPUB: file, span id, the span's text. */
export function koboSpans(kepub: Buffer): { source: string; id: string; text: string }[] {
  const out: { source: string; id: string; text: string }[] = [];
  for (const [name, data] of unzip(kepub)) {
    if (!/\.x?html?$/i.test(name)) continue;
    for (const m of data.toString('utf8').matchAll(/<span class="koboSpan" id="(kobo\.\d+\.\d+)">([\s\S]*?)<\/span>/g)) out.push({ source: name, id: m[1]!, text: m[2]! });
  }
  return out;
}

/** What a Kobo Libra 2 sends as its user agent (Qt WebKit with the store's client name). */
export const KOBO_UA = 'Mozilla/5.0 (Linux; U; Android 2.0; en-us;) AppleWebKit/538.1 (KHTML, like Gecko) Version/4.0 Mobile Safari/538.1 (Kobo Touch 0387/4.38.21908)';

export interface SyncRun {
  pages: Res[];
  entries: Record<string, any>[];
  token: string;
}

/** Syncs as the device does: pages while the answer says continue, each with the last token. */
export async function koboSync(call: Call, base: string, token: string | null): Promise<SyncRun> {
  const pages: Res[] = [];
  let t = token;
  for (let i = 0; i < 50; i++) {
    // as a Kobo does: the AccessToken `auth/device` gave it as a bearer, the last sync token
    const bearer = { authorization: `Bearer ${base.split('/').pop()}`, 'user-agent': KOBO_UA };
    const r = await call('GET', `${base}/v1/library/sync`, { headers: t ? { ...bearer, 'x-kobo-synctoken': t } : bearer });
    expect(r.status, r.text).toBe(200);
    pages.push(r);
    t = r.headers.get('x-kobo-synctoken');
    expect(t).toMatch(/^BINDERY\./);
    if (r.headers.get('x-kobo-sync') !== 'continue') break;
  }
  return { pages, entries: pages.flatMap((p) => p.json as Record<string, any>[]), token: t! };
}

/** The book id of a sync entry, whatever its kind. */
export function entryBook(e: Record<string, any>): { kind: string; id: string; removed?: boolean } | null {
  const kind = Object.keys(e)[0]!;
  const v = e[kind];
  if (kind === 'NewEntitlement' || kind === 'ChangedEntitlement') return { kind, id: v.BookEntitlement.Id, removed: v.BookEntitlement.IsRemoved };
  if (kind === 'ChangedReadingState') return { kind, id: v.ReadingState.EntitlementId };
  return null;
}
