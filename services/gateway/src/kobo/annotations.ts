// Highlights and notes on the Kobo's reading-services host (`/api/v3/content/<id>/annotations`, at
// this server's root: the device strips our path and sends the bearer `auth/device` gave it). A Kobo
// names a place as a KoboSpan path and a character offset in that span's text; our KEPUB's span map
// turns it into the canonical place, and the book's locator index into the CFI range the reading
// service takes, so a Kobo highlight is the reading service's annotation (its id kept as the
// `dedup_key` `kobo:<id>`, so a replay changes nothing). The other way, the reading service's
// highlights and notes of the book are answered in the Kobo's shape. Never a 401: one aborts the
// device's whole sync; a call we cannot place is answered and changes nothing.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, isUuid, type Reading } from '@bindery/contracts';
import type { Reader } from '../http/reading-client';
import type { LocatorIndexOf } from '../read-model/locator-indexes';
import type { Reads } from '../read-model/reads';
import type { KoboAuth } from './auth';
import { docOfSource, type KepubSource, type SpanMap } from './kepubs';
import * as L from '@bindery/locator';

const MAX_ANNOTATIONS = 500;
/** books one change check may name (the device asks about the books it opens: one or a few) */
const MAX_CHECKS = 50;
/** our ETags of a book's annotation set (the device keeps one as given and sends it back) */
const ETAG_PREFIX = 'W/"bindery:';
const etagOf = (list: { id: string; updated_at: string }[]) =>
  `${ETAG_PREFIX}${createHash('sha256')
    .update(
      list
        .map((a) => `${a.id}@${a.updated_at}`)
        .sort()
        .join(','),
    )
    .digest('base64url')
    .slice(0, 22)}"`;

interface KoboSpanPlace {
  chapterFilename?: unknown;
  startPath?: unknown;
  startChar?: unknown;
  endPath?: unknown;
  endChar?: unknown;
}
interface KoboAnnotation {
  id?: unknown;
  type?: unknown;
  highlightedText?: unknown;
  noteText?: unknown;
  highlightColor?: unknown;
  location?: { span?: KoboSpanPlace };
}
/** One of our highlights or notes, as the reading service answers it. */
type Ours = Reading.AnnotationRecord;

export interface AnnotationDeps {
  reads: Reads;
  koboAuth: KoboAuth;
  kepubs: KepubSource;
  reading: Reader;
  locatorIndex: LocatorIndexOf;
}

/** The span id a Kobo path names (`span#kobo\.12\.3`, with or without the escapes). */
const spanIdOf = (path: unknown): string | null => (typeof path === 'string' && path.length <= 500 ? (/kobo\.\d+\.\d+/.exec(path.replace(/\\/g, ''))?.[0] ?? null) : null);
const charOf = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1_000_000 ? v : null);

/** A place in a span → the canonical place. */
function placeOf(map: SpanMap, file: string, path: unknown, char: unknown): { spine: number; offset: number } | null {
  const id = spanIdOf(path);
  const c = charOf(char);
  const spine = docOfSource(map, file);
  if (id === null || c === null || spine === null) return null;
  const d = map.docs[spine]!;
  for (let j = 0; j < d.spans.length; j += 2) if (d.spans[j] === id) return { spine, offset: Math.min(d.n, (d.spans[j + 1] as number) + c) };
  return null;
}

/** The canonical place → the span holding it and the offset into the span's text. */
function spanAt(map: SpanMap, spine: number, offset: number): { path: string; id: string; char: number; progress: number } | null {
  const d = map.docs[spine];
  if (!d || d.spans.length === 0) return null;
  let j = 0;
  while (j + 2 < d.spans.length && (d.spans[j + 3] as number) <= offset) j += 2;
  const at = d.spans[j + 1] as number;
  return { path: d.path, id: d.spans[j] as string, char: Math.max(0, offset - at), progress: d.n ? offset / d.n : 0 };
}
const koboPath = (id: string) => `span#${id.replace(/\./g, '\\.')}`;

/** The Kobo, its owner as the caller, and the book (a visible EPUB), or null: then nothing is done. */
async function bookFor(deps: AnnotationDeps, req: FastifyRequest, id = (req.params as { id: string }).id): Promise<{ item: string; sha256: string } | null> {
  const kobo = await deps.koboAuth.verify(deps.koboAuth.bearer(req));
  if (!kobo || !isUuid(id)) return null;
  req.device = kobo;
  req.caller = { user_id: kobo.user_id, role: kobo.role };
  const a = (await deps.reads.context(req.caller)).access;
  const raw = await deps.reads.catalog.item(a, id.toLowerCase());
  if (!raw.ok) return null;
  const item = JSON.parse(raw.value) as Catalog.MediaItem;
  const epub = item.formats.find((f) => f.format.toLowerCase() === 'epub' && f.sha256);
  return epub ? { item: item.id, sha256: epub.sha256! } : null;
}

async function ours(deps: AnnotationDeps, req: FastifyRequest, item: string): Promise<(Ours & { kind: 'highlight' | 'note' })[]> {
  const out: (Ours & { kind: 'highlight' | 'note' })[] = [];
  for (const kind of ['highlight', 'note'] as const) {
    const r = await deps.reading(req, 'annotations-list', { item_id: item, kind });
    if (r.ok) out.push(...r.value.data.map((a) => ({ ...a, kind })));
  }
  return out;
}
const koboIdOf = (a: Ours) => (a.dedup_key?.startsWith('kobo:') ? a.dedup_key.slice(5) : a.id);

/** Our highlights and notes of a book in the Kobo's shape (those without a place in its KEPUB left out). */
function koboAnnotations(map: SpanMap, list: (Ours & { kind: 'highlight' | 'note' })[]) {
  const annotations = [];
  for (const a of list) {
    const p = a.position ?? {};
    if (p.spine_index === undefined || p.doc_offset === undefined) continue;
    const start = spanAt(map, p.spine_index, p.doc_offset);
    const end = spanAt(map, p.end_spine_index ?? p.spine_index, p.end_doc_offset ?? p.doc_offset);
    if (!start || !end) continue;
    annotations.push({
      id: koboIdOf(a),
      type: a.kind === 'note' || a.note ? 'note' : 'highlight',
      highlightedText: a.text,
      ...(a.note ? { noteText: a.note } : {}),
      highlightColor: a.color ?? '#FFFF00',
      clientLastModifiedUtc: new Date(a.updated_at).toISOString(),
      location: {
        span: {
          chapterFilename: start.path,
          chapterProgress: start.progress,
          chapterTitle: '',
          startPath: koboPath(start.id),
          startChar: start.char,
          endPath: koboPath(end.id),
          endChar: end.char,
        },
      },
    });
  }
  return annotations;
}

/** One highlight or note the Kobo sent, made the reading service's (one it cannot place changes nothing). */
async function saveKoboAnnotation(deps: AnnotationDeps, req: FastifyRequest, item: string, map: SpanMap, index: L.LocatorIndex, a: KoboAnnotation): Promise<void> {
  const span = a?.location?.span;
  if (typeof a?.id !== 'string' || a.id.length > 200 || !span || typeof span.chapterFilename !== 'string') return;
  const start = placeOf(map, span.chapterFilename, span.startPath, span.startChar);
  const end = placeOf(map, span.chapterFilename, span.endPath ?? span.startPath, span.endChar ?? span.startChar);
  const text = typeof a.highlightedText === 'string' ? a.highlightedText : '';
  if (!start || !end || !text.trim()) return;
  const note = typeof a.noteText === 'string' ? a.noteText : '';
  const kind = a.type === 'note' || note ? 'note' : 'highlight';
  const hex = typeof a.highlightColor === 'string' && /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.test(a.highlightColor) ? a.highlightColor : null;
  const color = hex ? { color: hex } : {};
  const input = { position: { epubcfi: L.canonicalToCfiRange(index, start, end) }, text, note, dedup_key: `kobo:${a.id}`, ...color };
  const r = await deps.reading(req, 'annotation-create', { item_id: item, kind, input });
  // an edit on the device (its note, its colour) of one we have
  if (r.ok && r.value.existing && (r.value.note !== note || (hex !== null && r.value.color?.toLowerCase() !== `#${hex.replace('#', '').toLowerCase()}`)))
    await deps.reading(req, 'annotation-update', { id: r.value.id, kind, input: { note, ...color } });
}

export function koboAnnotationRoutes(app: FastifyInstance, deps: AnnotationDeps): void {
  const indexOf = deps.locatorIndex;

  app.get('/api/v3/content/:id/annotations', async (req, reply) => {
    const c = await bookFor(deps, req).catch(() => null);
    const map = c && (await deps.kepubs.spans(c.sha256).catch(() => null));
    if (!c || !map) return { annotations: [], nextPageOffsetToken: null };
    const list = await ours(deps, req, c.item);
    const annotations = koboAnnotations(map, list);
    reply.header('ETag', etagOf(list));
    return { annotations, nextPageOffsetToken: null };
  });

  // The device asks which of its books' annotations changed, naming each with the ETag it holds:
  // the answer names those whose set here differs. The GET that follows replaces the device's whole
  // set for the book, so a book is named only when there is something of ours to deliver: its ETag
  // is one we gave and our set changed since, or it is the device's own and we hold highlights or
  // notes made elsewhere (web, KOReader).
  app.post('/api/v3/content/checkforchanges', async (req) => {
    const list = Array.isArray(req.body) ? (req.body as { ContentId?: unknown; etag?: unknown }[]).slice(0, MAX_CHECKS) : [];
    const changed: string[] = [];
    for (const entry of list) {
      const id = entry?.ContentId;
      if (typeof id !== 'string' || !isUuid(id)) continue;
      const c = await bookFor(deps, req, id).catch(() => null);
      if (!c) continue;
      const mine = await ours(deps, req, c.item);
      const held = typeof entry.etag === 'string' ? entry.etag : '';
      const now = etagOf(mine);
      if (held === now) continue;
      if (held.startsWith(ETAG_PREFIX) || mine.some((a) => !a.dedup_key?.startsWith('kobo:'))) changed.push(id);
    }
    return changed;
  });

  app.patch('/api/v3/content/:id/annotations', async (req, reply) => {
    const body = req.body as { updatedAnnotations?: unknown; deletedAnnotationIds?: unknown } | null;
    const updated = Array.isArray(body?.updatedAnnotations) ? (body.updatedAnnotations as KoboAnnotation[]) : [];
    const deleted = Array.isArray(body?.deletedAnnotationIds) ? (body.deletedAnnotationIds as unknown[]).filter((x): x is string => typeof x === 'string' && x.length <= 200) : [];
    if (updated.length + deleted.length > MAX_ANNOTATIONS) return reply.code(400).send({ error: 'invalid request' });
    const c = await bookFor(deps, req).catch(() => null);
    if (!c) return reply.code(204).send();
    const map = await deps.kepubs.spans(c.sha256).catch(() => null);
    const index = map && (await indexOf(c.sha256).catch(() => null));
    if (map && index) for (const a of updated) await saveKoboAnnotation(deps, req, c.item, map, index, a);
    if (deleted.length) {
      const want = new Set(deleted);
      for (const a of await ours(deps, req, c.item)) if (want.has(koboIdOf(a))) await deps.reading(req, 'annotation-delete', { id: a.id, kind: a.kind });
    }
    return reply.code(204).send();
  });
}
