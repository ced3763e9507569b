// FictionBook 2: one XML document, images inline as base64 <binary> elements. Read whole, bounded;
// a zipped FB2 (.fb2.zip) is unpacked from its .fb2 entry.
import { BookError } from './book-error';
import { readHead, readWholeFile } from './file-bytes';
import { sniffImage } from './images';
import { MAX_COVER_BYTES, MAX_FB2_BYTES } from './limits';
import { clean, htmlToText, normalizeIsbn, numberOf, unique, yearOf } from './text';
import { emptyMetadata, type BookMetadata, type Contributor, type Extracted } from './types';
import { attr, child, decodeXml, elements, markupOf, parseXml, textOf, type XmlElement } from './xml';
import { openZip } from './zip';

export async function extractFb2(path: string): Promise<Extracted> {
  const head = await readHead(path, 4, 'FB2');
  const bytes = Buffer.from(head).toString('latin1') === 'PK\x03\x04' ? await unzipFb2(path) : await readWholeFile(path, MAX_FB2_BYTES, 'FB2');
  const text = decodeXml(bytes);
  if (rootName(text)?.replace(/^.*:/u, '').toLowerCase() !== 'fictionbook') throw new BookError('not a valid FB2: no FictionBook root element');
  // Only <description> is parsed: building a tree of a whole novel costs seconds and a gigabyte.
  const description = descriptionOf(text);
  const coverId = attr(child(child(child(description, 'title-info'), 'coverpage'), 'image'), 'href')?.trim();
  return { metadata: fb2Metadata(description), cover: coverId?.startsWith('#') ? binary(text, coverId.slice(1)) : null };
}

/** The document element's name, found by skipping the prolog (declaration, comments, doctype). */
function rootName(text: string): string | null {
  let i = 0;
  for (;;) {
    i = text.indexOf('<', i);
    if (i < 0 || i > 65_536) return null;
    const skipTo = text.startsWith('<?', i) ? '?>' : text.startsWith('<!--', i) ? '-->' : text.startsWith('<!', i) ? '>' : null;
    if (skipTo === null) return /^<([\w.:-]+)/u.exec(text.slice(i, i + 256))?.[1] ?? null;
    const end = text.indexOf(skipTo, i + 2);
    if (end < 0) return null;
    i = end + skipTo.length;
  }
}

function descriptionOf(text: string): XmlElement | null {
  const open = /<(?:[\w.-]+:)?description[\s>]/u.exec(text);
  if (!open) return null;
  const close = /<\/(?:[\w.-]+:)?description\s*>/gu;
  close.lastIndex = open.index;
  const end = close.exec(text);
  if (!end) throw new BookError('not a valid FB2: unterminated description');
  try {
    return parseXml(text.slice(open.index, end.index + end[0].length));
  } catch (e) {
    throw new BookError('not a valid FB2: unreadable description', { cause: e });
  }
}

/** The base64 content of <binary id="…">, decoded, if it is an image within the cover cap. */
function binary(text: string, id: string): Buffer | null {
  const tag = /<(?:[\w.-]+:)?binary\b([^>]*)>/gu;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const idAttr = /\bid\s*=\s*(?:"([^"]*)"|'([^']*)')/u.exec(m[1] ?? '');
    if ((idAttr?.[1] ?? idAttr?.[2])?.trim() !== id) continue;
    const start = m.index + m[0].length;
    const end = text.indexOf('<', start);
    if (end < 0 || end - start > (MAX_COVER_BYTES * 4) / 3 + 65_536) return null;
    const bytes = Buffer.from(text.slice(start, end).replace(/\s+/gu, ''), 'base64');
    return sniffImage(bytes) ? bytes : null;
  }
  return null;
}

async function unzipFb2(path: string): Promise<Uint8Array> {
  const zip = await openZip(path, 'FB2');
  try {
    const entry = zip.entries.find((e) => e.fileName.toLowerCase().endsWith('.fb2'));
    if (!entry) throw new BookError('not a valid FB2: no .fb2 file in the zip');
    return await zip.read(entry, MAX_FB2_BYTES);
  } finally {
    zip.close();
  }
}

export function fb2Metadata(description: XmlElement | null): BookMetadata {
  const info = child(description, 'title-info');
  const publish = child(description, 'publish-info');
  const text = (el: XmlElement | null): string | null => clean(textOf(el));
  const m = emptyMetadata();
  m.title = text(child(info, 'book-title'));
  const people: Contributor[] = [];
  for (const [tag, role] of [
    ['author', 'author'],
    ['translator', 'translator'],
  ] as const) {
    for (const p of elements(info, tag)) {
      const name = personName(p);
      if (name) people.push({ name, role });
    }
  }
  m.contributors = unique(people, (c) => `${c.role}\u0000${c.name}`);
  m.subjects = unique(
    elements(info, 'genre')
      .map(text)
      .filter((g): g is string => g !== null),
  );
  m.language = text(child(info, 'lang'));
  const sequence = child(info, 'sequence');
  m.series = clean(attr(sequence, 'name'));
  m.series_index = m.series ? numberOf(attr(sequence, 'number')) : null;
  const annotation = child(info, 'annotation');
  m.description = annotation ? htmlToText(markupOf(annotation)) : null;
  const date = child(info, 'date');
  m.year = yearOf(attr(date, 'value')) ?? yearOf(text(date)) ?? yearOf(text(child(publish, 'year')));
  m.publisher = text(child(publish, 'publisher'));
  m.isbn = normalizeIsbn(text(child(publish, 'isbn')));
  if (m.isbn) m.identifiers.isbn = m.isbn;
  const id = text(child(child(description, 'document-info'), 'id'));
  if (id) m.identifiers.fb2 = id;
  return m;
}

function personName(p: XmlElement): string | null {
  const part = (tag: string): string => clean(textOf(child(p, tag))) ?? '';
  const full = clean([part('first-name'), part('middle-name'), part('last-name')].join(' '));
  return full ?? clean(part('nickname'));
}
