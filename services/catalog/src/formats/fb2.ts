// FictionBook 2: one XML document, images inline as base64 <binary> elements. Read whole (it has
// to be parsed whole), bounded; a zipped FB2 (.fb2.zip) is unpacked from its single .fb2 entry.
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
  let root: XmlElement | null;
  try {
    root = parseXml(decodeXml(bytes));
  } catch (e) {
    throw new BookError('not a valid FB2: unreadable XML', { cause: e });
  }
  if (root?.name !== 'fictionbook') throw new BookError('not a valid FB2: no FictionBook root element');
  const description = child(root, 'description');
  return { metadata: fb2Metadata(description), cover: coverOf(root, child(child(description, 'title-info'), 'coverpage')) };
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
  for (const [tag, role] of [['author', 'author'], ['translator', 'translator']] as const) {
    for (const p of elements(info, tag)) {
      const name = personName(p);
      if (name) people.push({ name, role });
    }
  }
  m.contributors = unique(people, (c) => `${c.role}\u0000${c.name}`);
  m.subjects = unique(elements(info, 'genre').map(text).filter((g): g is string => g !== null));
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

/** <coverpage><image l:href="#id"/></coverpage> points at <binary id="id"> (base64). */
function coverOf(root: XmlElement, coverpage: XmlElement | null): Buffer | null {
  const href = attr(child(coverpage, 'image'), 'href')?.trim();
  if (!href?.startsWith('#')) return null;
  const binary = elements(root, 'binary').find((b) => attr(b, 'id')?.trim() === href.slice(1));
  if (!binary) return null;
  const base64 = textOf(binary);
  if (base64.length > (MAX_COVER_BYTES * 4) / 3 + 4096) return null;
  const bytes = Buffer.from(base64.replace(/\s+/gu, ''), 'base64');
  return sniffImage(bytes) ? bytes : null;
}
