// A simulated Kobo for the end-to-end tests: small EPUBs made on the spot (a stored ZIP, no library
// needed), a store client that follows the sync token and the `continue` header as the device does,
// and the KoboSpans of a downloaded KEPUB.
import { inflateRawSync } from 'node:zlib';
import { expect } from 'vitest';
import type { Call } from './helpers';
import type { Res } from '../support/http';

const CRC = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
const crc32 = (b: Buffer) => {
  let c = -1;
  for (const x of b) c = CRC[(c ^ x) & 0xff]! ^ (c >>> 8);
  return (c ^ -1) >>> 0;
};

/** A ZIP of stored entries, in order. */
export function storedZip(entries: [string, string | Buffer][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of entries) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
    const n = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    locals.push(local, n, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, n);
    offset += 30 + n.length + data.length;
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

/** A small valid EPUB 3 with a title, an author and a few sentences. */
export function smallEpub(title: string, author: string, uid: string, text = 'It begins here. It goes on for a while. Then it ends.'): Buffer {
  const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:${uid}</dc:identifier><dc:title>${x(title)}</dc:title><dc:creator>${x(author)}</dc:creator><dc:language>en</dc:language><meta property="dcterms:modified">2024-01-01T00:00:00Z</meta></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
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
