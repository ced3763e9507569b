// A book folder's metadata.opf (calibre's backup of a book's metadata, also written by other
// tools) read into the same record as metadata.db gives. The package is parsed by the EPUB reader's
// OPF parser; what only calibre writes (title sort, rating, custom columns, every language, each
// author's file-as) is read from the same tree.
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, relative, sep } from 'node:path';
import { formatOf } from '../formats/format-of';
import { parsePackage } from '../formats/opf';
import { attr, child, decodeXml, elements, parseXml, textOf, type XmlElement } from '../formats/xml';
import { addIdentifier, description, language, rating, seriesIndex, text, timestamp } from './fields';
import { type CalibreBook, type CalibreColumnType, type CalibreCustomValue, CalibreError, type CalibreFormat } from './types';

const MAX_OPF_BYTES = 4 * 1024 * 1024;
const TYPES = new Set(['bool', 'int', 'float', 'rating', 'text', 'comments', 'series', 'enumeration', 'datetime']);

/** `opfPath` is the book folder's metadata.opf; paths in the record are relative to `root` (by
 * default the book's folder itself). */
export async function readOpf(opfPath: string, root: string = dirname(opfPath)): Promise<CalibreBook> {
  const folder = dirname(opfPath);
  const info = await stat(opfPath).catch((e: unknown) => {
    throw new CalibreError('missing', `${opfPath} cannot be read (${(e as Error).message})`, { cause: e });
  });
  if (info.size > MAX_OPF_BYTES) throw new CalibreError('corrupt', `${opfPath} is larger than ${MAX_OPF_BYTES} bytes`);
  let pkg: XmlElement | null;
  try {
    pkg = parseXml(decodeXml(await readFile(opfPath)));
  } catch (e) {
    throw new CalibreError('corrupt', `${opfPath} is not a readable OPF (${(e as Error).message})`, { cause: e });
  }
  if (pkg?.name !== 'package') throw new CalibreError('corrupt', `${opfPath} is not an OPF package document`);
  const { metadata: m } = parsePackage(pkg, basename(opfPath));
  const meta = child(pkg, 'metadata');
  // calibre always writes a title: without one the file is cut short, and an "Unknown" must not
  // win over what the book's files say
  if (text(m.title) === null) throw new CalibreError('corrupt', `${opfPath} has no title (a cut-short or empty OPF)`);
  const calibre = calibreMetas(meta);
  const rel = relative(root, folder).split(sep).join('/');
  if (rel.startsWith('..')) throw new CalibreError('missing', `${opfPath} is not inside ${root}`);
  const at = (name: string): string => (rel === '' ? name : `${rel}/${name}`);

  const identifiers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.identifiers)) addIdentifier(identifiers, k, v);
  const calibreId = Number(identifiers.calibre);
  delete identifiers.calibre;
  const uuid = identifiers.uuid ?? null;
  delete identifiers.uuid;

  const creators = elements(meta).filter((e) => e.name === 'creator');
  const authors = m.contributors
    .filter((c) => c.role === 'author')
    .map((c) => ({ name: text(c.name) ?? c.name, sort: fileAs(meta, creators.find((e) => text(textOf(e)) === c.name) ?? null) }));
  const languages: string[] = [];
  for (const l of elements(meta).filter((e) => e.name === 'language')) {
    const tag = language(textOf(l));
    if (tag && !languages.includes(tag)) languages.push(tag);
  }
  const names = await readdir(folder).catch(() => [] as string[]);
  const formats: CalibreFormat[] = names
    .filter((n) => formatOf(n) !== null)
    .sort()
    .map((n) => ({ format: n.slice(n.lastIndexOf('.') + 1).toLowerCase(), path: at(n), size: null }));
  const hasCover = names.includes('cover.jpg');
  const series = text(m.series);
  return {
    id: Number.isInteger(calibreId) && calibreId > 0 ? calibreId : null,
    uuid,
    path: rel,
    formats,
    title: text(m.title)!,
    title_sort: text(calibre.get('title_sort')) ?? fileAs(meta, elements(meta).find((e) => e.name === 'title') ?? null),
    authors,
    author_sort: authors[0]?.sort ?? null,
    series,
    series_index: series === null ? null : seriesIndex(m.series_index),
    tags: m.subjects.map((s) => text(s)).filter((s, i, all): s is string => s !== null && all.indexOf(s) === i),
    publisher: text(m.publisher),
    languages,
    identifiers,
    // parsePackage already turned the description's HTML into text; the same cleaning again is a no-op
    description: m.description === null ? null : description(m.description),
    year: m.year,
    rating: rating(calibre.get('rating')),
    has_cover: hasCover,
    cover_path: hasCover ? at('cover.jpg') : null,
    added_at: timestamp(calibre.get('timestamp')),
    last_modified: info.mtime.toISOString().replace('Z', '+00:00'),
    custom: customOf(calibre),
  };
}

/** A sort form: OPF 2's `opf:file-as` attribute, or OPF 3's `file-as` refinement of the element. */
function fileAs(meta: XmlElement | null, el: XmlElement | null): string | null {
  if (!el) return null;
  const own = text(attr(el, 'file-as'));
  if (own) return own;
  const id = attr(el, 'id')?.trim();
  const refinement = id ? elements(meta, 'meta').find((m) => attr(m, 'refines')?.trim() === `#${id}` && attr(m, 'property')?.trim() === 'file-as') : undefined;
  return refinement ? text(textOf(refinement)) : null;
}

/** calibre's own metas: `<meta name="calibre:x" content>` (OPF 2) or `<meta property="calibre:x">` (OPF 3). */
function calibreMetas(meta: XmlElement | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of elements(meta, 'meta')) {
    const name = attr(e, 'name') ?? attr(e, 'property');
    if (!name?.startsWith('calibre:')) continue;
    const value = attr(e, 'content') ?? textOf(e);
    if (!out.has(name.slice(8))) out.set(name.slice(8), value);
  }
  return out;
}

/** calibre writes each custom column as `calibre:user_metadata:#label` holding its definition and
 * value (`#value#`) as JSON; OPF 3 puts them all in one `calibre:user_metadata` object. */
function customOf(calibre: Map<string, string>): CalibreCustomValue[] {
  const defs: Record<string, unknown>[] = [];
  const parse = (s: string): unknown => {
    try {
      return JSON.parse(s);
    } catch {
      return null;
    }
  };
  for (const [k, v] of calibre) {
    if (k.startsWith('user_metadata:')) defs.push(parse(v) as Record<string, unknown>);
    else if (k === 'user_metadata') for (const d of Object.values((parse(v) ?? {}) as Record<string, unknown>)) defs.push(d as Record<string, unknown>);
  }
  const out: CalibreCustomValue[] = [];
  for (const d of defs) {
    if (!d || typeof d !== 'object' || !TYPES.has(String(d.datatype))) continue;
    const label = text(d.label);
    if (!label) continue;
    const name = text(d.name) ?? label;
    const type = d.datatype as CalibreColumnType;
    const raw = d['#value#'];
    const is_read = type === 'bool' && (label.toLowerCase() === 'read' || name.toLowerCase() === 'read');
    let value: CalibreCustomValue['value'] | null;
    if (Array.isArray(raw)) value = raw.map((x) => text(x)).filter((x): x is string => x !== null);
    else if (type === 'bool') value = raw === null || raw === undefined ? null : raw === true;
    else if (type === 'int' || type === 'float' || type === 'rating') value = typeof raw === 'number' && Number.isFinite(raw) ? raw : null;
    else if (type === 'datetime') value = timestamp(raw);
    else if (type === 'comments') value = description(raw);
    else value = text(raw);
    if (value === null || (Array.isArray(value) && value.length === 0)) continue;
    const v: CalibreCustomValue = { label, name, type, value, is_read };
    if (type === 'series') v.series_index = seriesIndex(d['#extra#']);
    out.push(v);
  }
  return out.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}
