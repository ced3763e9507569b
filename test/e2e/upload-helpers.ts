// Shared pieces of the upload tests: one upload by fetch, and a small EPUB with bytes of its own.
import { createHash } from 'node:crypto';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';

export interface UploadAnswer {
  status: number;
  json: any;
}

/** One upload by fetch: the bytes as the body, name and place in the query. */
export async function upload(url: string, token: string, libraryId: string, name: string, body: Buffer, q: Record<string, string> = {}): Promise<UploadAnswer> {
  const qs = new URLSearchParams({ name, ...q });
  const r = await fetch(`${url}/api/libraries/${libraryId}/uploads?${qs}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body,
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, json };
}

/** A small valid EPUB with its own title (so its bytes are new). */
export function buildEpub(title: string): Buffer {
  const opf = `<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:uuid:${createHash('md5').update(title).digest('hex')}</dc:identifier><dc:title>${title}</dc:title><dc:language>en</dc:language></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`;
  return buildZip([
    { name: 'mimetype', data: 'application/epub+zip' },
    {
      name: 'META-INF/container.xml',
      data: '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
      deflate: true,
    },
    { name: 'content.opf', data: opf, deflate: true },
    { name: 'c1.xhtml', data: `<html xmlns="http://www.w3.org/1999/xhtml"><head><title>${title}</title></head><body><p>${title}</p></body></html>`, deflate: true },
  ]);
}
