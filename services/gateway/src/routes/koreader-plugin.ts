// The KOReader plugin API (device credential, never a session): /api/sync/koreader/progress,
// metadata/<uuid>, library, bookmarks, resolve. A book is found by uuid, then SHA-256 (the item's,
// then a format's, then one it had), then the file name of `file_path`, then title and author.
// Annotations cross the boundary in the plugin's shape: palette names ↔ the web's hex, an echo
// without a colour changes nothing, deletions only through the explicit arrays and only by keys the
// server gave out, a deleted key never comes back, and the metadata fetch carries the tombstones.
// Their places are the reading service's canonical spans: pos0/pos1 go in as XPointers and come
// back as XPointers derived from the span, whichever client made the annotation.
import { createHash } from 'node:crypto';
import Type from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Reading, type Failure, type Result } from '@bindery/contracts';
import type { DeviceAuth } from '../http/device-auth';
import type { Reader } from '../http/reading-client';
import { sendFailure } from '../http/reply';
import type { Access } from '../read-model/access';
import { KosyncView } from '../read-model/kosync-view';
import type { Reads } from '../read-model/reads';
import { errors, Nullable } from '../http/schemas';

const tags = ['koreader plugin'];
const refused = errors(400, 401, 403, 404);
const S = Type.String();
const Formats = Type.Array(Type.Object({ format: S, sha256: Nullable(S) }));
const Resolved = Type.Object(
  { media_item_id: S, uuid: S, matched_by: S, title: Nullable(S), authors: Type.Array(S), sha256: Nullable(S), formats: Formats },
  { description: 'the book, and how it was matched (uuid, sha256, file_path, title_author)' },
);
const Library = Type.Object({ data: Type.Array(Type.Object({ uuid: S, title: S, sha256: Nullable(S) })) }, { description: 'a page of the books the device may see' });
const Pushed = Type.Object({
  status: S,
  media_item_id: S,
  matched_by: S,
  healed: Type.Array(Type.Unknown()),
  progress: Type.Unknown(),
  conflict: Type.Optional(Type.Unknown()),
  deleted: Type.Object({ highlights: Type.Integer(), bookmarks: Type.Integer() }),
  ignored: Type.Unknown(),
});
const AnnotationOut = Type.Object({
  dedup_key: S,
  type: S,
  pos0: Type.Unknown(),
  pos1: Type.Unknown(),
  page: Type.Unknown(),
  percentage: Type.Unknown(),
  text: Nullable(S),
  book_sha256: Nullable(S),
});
const DeletedKeys = Type.Object({ highlights: Type.Array(S), notes: Type.Array(S), bookmarks: Type.Array(S) });
const Metadata = Type.Object(
  {
    uuid: S,
    title: S,
    authors: Type.Array(S),
    sha256: Nullable(S),
    formats: Formats,
    percentage: Nullable(Type.Number()),
    koreader_xpointer: Nullable(S),
    page: Type.Unknown(),
    progress: Type.Unknown(),
    highlights: Type.Array(AnnotationOut),
    notes: Type.Array(AnnotationOut),
    bookmarks: Type.Array(AnnotationOut),
    deleted: DeletedKeys,
  },
  { description: "the book's position and annotations, and the keys deleted elsewhere" },
);
const Merged = Type.Object({ media_item_id: S, matched_by: S }, { description: 'what was created, updated or left unchanged' });

export const PLUGIN_PREFIX = '/api/sync/koreader';
export const BOOK_NOT_FOUND = 'book not found';

const Text = (max: number) => Type.String({ maxLength: max });
const Opt = <T extends Parameters<typeof Type.Optional>[0]>(t: T) => Type.Optional(t);
const Keys = Type.Array(Text(512), { maxItems: 10_000 });

const Book = Type.Object({
  uuid: Opt(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  sha256: Opt(Type.Union([Type.String({ pattern: '^[0-9a-fA-F]{64}$' }), Type.Null()])),
  file_path: Opt(Type.Union([Text(4096), Type.Null()])),
  title: Opt(Type.Union([Text(2000), Type.Null()])),
  author: Opt(Type.Union([Text(2000), Type.Null()])),
  authors: Opt(Type.Union([Type.Array(Text(2000), { maxItems: 50 }), Text(2000), Type.Null()])),
  percentage: Type.Number({ minimum: 0, maximum: 100 }),
  epubcfi: Opt(Type.Union([Text(4096), Type.Null()])),
  page: Opt(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])),
  page_count: Opt(Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()])),
  deleted_highlights: Opt(Keys),
  deleted_bookmarks: Opt(Keys),
});
type BookT = Type.Static<typeof Book>;
const ProgressBody = Type.Array(Book, { minItems: 1, maxItems: 1 });

const Annotation = Type.Object({
  dedup_key: Opt(Type.Union([Text(512), Type.Null()])),
  type: Opt(Type.Union([Text(20), Type.Null()])),
  pos0: Opt(Type.Union([Text(4096), Type.Null()])),
  pos1: Opt(Type.Union([Text(4096), Type.Null()])),
  page: Opt(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  percentage: Opt(Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()])),
  text: Opt(Type.Union([Text(100_000), Type.Null()])),
  note: Opt(Type.Union([Text(100_000), Type.Null()])),
  chapter: Opt(Type.Union([Text(4096), Type.Null()])),
  color: Opt(Type.Union([Text(32), Type.Null()])),
  book_sha256: Opt(Type.Union([Text(64), Type.Null()])),
});
const List = Type.Array(Annotation, { maxItems: 5000 });
const BookmarksBody = Type.Object({
  book_uuid: Opt(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
  book_sha256: Opt(Type.Union([Type.String({ pattern: '^[0-9a-fA-F]{64}$' }), Type.Null()])),
  bookmarks: Opt(List),
  notes: Opt(List),
  highlights: Opt(List),
});
const ResolveQuery = Type.Object({
  uuid: Opt(Text(64)),
  sha256: Opt(Text(128)),
  file_path: Opt(Text(4096)),
  title: Opt(Text(2000)),
  author: Opt(Text(2000)),
});
const Paging = Type.Object({ limit: Opt(Type.String({ pattern: '^\\d{1,4}$' })), offset: Opt(Type.String({ pattern: '^\\d{1,9}$' })) });

type Kind = Reading.AnnotationRecord['type'];
/** an annotation as the reading service answers it */
type Stored = Reading.AnnotationRecord;

/** A book's annotations, live and deleted. */
type Listed = Result<{ live: Stored[]; deleted: Stored[] }>;

/** The key a device knows an annotation by: its dedup_key, or (made on the web) its id. */
const keyOf = (a: Stored) => a.dedup_key ?? a.id;

export interface PluginDeps {
  deviceAuth: DeviceAuth;
  reads: Reads;
  reading: Reader;
}

export function koreaderPluginRoutes(app: FastifyInstance, { deviceAuth, reads, reading }: PluginDeps): void {
  const view = new KosyncView(reads.db);
  // the device acts for its owner, with at most the owner's role
  const asOwner = async (req: FastifyRequest) => {
    if (req.device) req.caller = deviceAuth.callerOf(req.device);
  };
  const device = { onRequest: deviceAuth.requireDevice, preHandler: asOwner };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  const notFound = (): Failure => fail('not_found', BOOK_NOT_FOUND);

  type Found = { item: string; by: string };
  /** Resolution: uuid → sha256 (item, format, history) → file name of file_path → title and author. */
  async function resolve(
    req: FastifyRequest,
    b: { uuid?: string | null; sha256?: string | null; file_path?: string | null; title?: string | null; author?: string | null },
  ): Promise<Found | null> {
    const a = await access(req);
    if (b.uuid && (await reads.catalog.itemLibrary(a, b.uuid))) return { item: b.uuid.toLowerCase(), by: 'uuid' };
    if (b.sha256 && /^[0-9a-fA-F]{64}$/.test(b.sha256)) {
      const s = await view.itemBySha256(a, b.sha256);
      if (s) return { item: s.item, by: s.by === 'sha256' ? 'sha256' : s.by === 'format_sha256' ? 'format_sha256' : 'sha256_history' };
    }
    const name = b.file_path?.split(/[\\/]/).pop();
    if (name) {
      const f = await view.itemOf(a, createHash('md5').update(name, 'utf8').digest('hex'));
      if (f) return { item: f, by: 'file_path' };
    }
    if (b.title?.trim()) {
      const t = await view.itemByTitle(a, b.title, b.author ?? undefined);
      if (t) return { item: t, by: 'title_author' };
    }
    return null;
  }

  /** The visible item's public record (the catalog view's rendered JSON), or null. */
  const recordOf = async (a: Access, id: string): Promise<Record<string, unknown> | null> => {
    const r = await reads.catalog.item(a, id);
    return r.ok ? (JSON.parse(r.value) as Record<string, unknown>) : null;
  };

  const summary = async (req: FastifyRequest, found: Found) => {
    const doc = await recordOf(await access(req), found.item);
    return {
      media_item_id: found.item,
      uuid: found.item,
      matched_by: found.by,
      title: doc?.title ?? null,
      authors: doc?.authors ?? [],
      sha256: doc?.sha256 ?? null,
      formats: ((doc?.formats as { format: string; sha256: string | null }[] | undefined) ?? []).map((f) => ({ format: f.format, sha256: f.sha256 })),
    };
  };

  app.get(
    `${PLUGIN_PREFIX}/resolve`,
    { ...device, schema: { tags, summary: 'which book this is', querystring: ResolveQuery, response: { 200: Resolved, ...refused } } },
    async (req, reply) => {
      const q = req.query as Type.Static<typeof ResolveQuery>;
      if (!q.uuid && !q.sha256 && !q.file_path && !q.title) return sendFailure(reply, fail('validation', 'one of uuid, sha256, file_path or title is required'));
      const found = await resolve(req, q);
      if (!found) return sendFailure(reply, notFound());
      return summary(req, found);
    },
  );

  app.get(
    `${PLUGIN_PREFIX}/library`,
    { ...device, schema: { tags, summary: 'the books, with their hashes', querystring: Paging, response: { 200: Library, ...refused } } },
    async (req) => {
      const q = req.query as Type.Static<typeof Paging>;
      const limit = Math.min(1000, Math.max(1, Number(q.limit ?? 200)));
      const offset = Number(q.offset ?? 0);
      const page = await view.page(await access(req), limit, offset);
      return {
        data: page.docs.map((d) => ({
          uuid: d.id,
          title: d.title,
          authors: d.authors,
          series: d.series,
          series_index: d.series_index,
          sha256: d.sha256,
          formats: (d.formats as { format: string; sha256: string | null; size: number; file_url: string }[]).map((f) => ({
            format: f.format,
            sha256: f.sha256,
            size: f.size,
            file_url: f.file_url,
          })),
          file_url: d.file_url,
        })),
        total: page.total,
        limit,
        offset,
      };
    },
  );

  /** The caller's annotations of a book, live and deleted. */
  async function annotations(req: FastifyRequest, item: string): Promise<Listed> {
    const live: Stored[] = [];
    for (const kind of ['highlight', 'note', 'bookmark'] as const) {
      const r = await reading(req, 'annotations-list', { item_id: item, kind });
      if (!r.ok) return r;
      live.push(...(r.value as { data: Stored[] }).data);
    }
    const d = await reading(req, 'annotations-deleted', { item_id: item });
    if (!d.ok) return d;
    return { ok: true, value: { live, deleted: (d.value as { data: Stored[] }).data } };
  }

  app.post(
    `${PLUGIN_PREFIX}/progress`,
    { ...device, schema: { tags, summary: 'push a position (and deletions)', body: ProgressBody, response: { 200: Pushed, ...refused, ...errors(409) } } },
    async (req, reply) => {
      const b = (req.body as BookT[])[0]!;
      const author = typeof b.authors === 'string' ? b.authors : Array.isArray(b.authors) ? b.authors[0] : (b.author ?? undefined);
      const found = await resolve(req, { ...b, author });
      if (!found) return sendFailure(reply, notFound());
      const input: Record<string, unknown> = { percentage: b.percentage, client: 'koreader', device: req.device!.name };
      if (b.epubcfi) input.epubcfi = b.epubcfi;
      if (b.page) input.page = b.page;
      if (b.page_count) input.page_count = b.page_count;
      const saved = await reading(req, 'progress-put', { item_id: found.item, input });
      if (!saved.ok) return sendFailure(reply, saved.error);
      // the keys the device deleted: matched and deleted by the reading service, which owns annotations
      const gone = await reading(req, 'annotations-delete-keys', { item_id: found.item, input: { highlights: b.deleted_highlights ?? [], bookmarks: b.deleted_bookmarks ?? [] } });
      if (!gone.ok) return sendFailure(reply, gone.error);
      const { deleted, ignored } = gone.value as { deleted: { highlights: number; bookmarks: number }; ignored: { key: string; reason: string }[] };
      const v = saved.value as { status: string; healed: string[]; progress: Record<string, unknown>; conflict?: unknown };
      return {
        status: v.status,
        media_item_id: found.item,
        matched_by: found.by,
        healed: v.healed,
        progress: v.progress,
        ...(v.conflict ? { conflict: v.conflict } : {}),
        deleted,
        ignored,
      };
    },
  );

  const shape = (a: Stored, sha: string | null) => ({
    dedup_key: keyOf(a),
    type: a.type,
    pos0: a.position.pos0 ?? null,
    pos1: a.position.pos1 ?? null,
    page: a.position.page ?? null,
    percentage: a.position.percentage ?? null,
    chapter: a.position.chapter ?? null,
    text: a.text,
    note: a.note,
    color: Reading.paletteNameOf(a.color),
    book_sha256: sha,
    updated_at: a.updated_at,
  });

  const metadataSchema = {
    tags,
    summary: "a book's position and annotations",
    params: Type.Object({ uuid: Type.String({ maxLength: 64 }) }),
    response: { 200: Metadata, ...refused },
  };
  app.get(`${PLUGIN_PREFIX}/metadata/:uuid`, { ...device, schema: metadataSchema }, async (req, reply) => {
    const uuid = (req.params as { uuid: string }).uuid;
    const doc = await recordOf(await access(req), uuid);
    if (!doc) return sendFailure(reply, notFound());
    const item = uuid.toLowerCase();
    const sha = (doc.sha256 as string | null) ?? null;
    const p = await reading(req, 'progress-get', { item_id: item });
    if (!p.ok && p.error.code !== 'not_found') return sendFailure(reply, p.error);
    const progress = p.ok ? (p.value as Record<string, unknown>) : null;
    const all = await annotations(req, item);
    if (!all.ok) return sendFailure(reply, all.error);
    const of = (list: Stored[], kind: Kind) => list.filter((x) => x.type === kind);
    const keys = (list: Stored[], kind: Kind) => of(list, kind).map(keyOf);
    return {
      uuid: item,
      title: doc.title,
      authors: doc.authors,
      sha256: sha,
      formats: (doc.formats as { format: string; sha256: string | null }[]).map((f) => ({ format: f.format, sha256: f.sha256 })),
      percentage: progress ? progress.percentage : null,
      koreader_xpointer: progress?.xpointer ?? null,
      page: progress?.page ?? null,
      progress,
      highlights: of(all.value.live, 'highlight').map((x) => shape(x, sha)),
      notes: of(all.value.live, 'note').map((x) => shape(x, sha)),
      bookmarks: of(all.value.live, 'bookmark').map((x) => shape(x, sha)),
      // the tombstones: keys the device should delete on its side
      deleted: { highlights: keys(all.value.deleted, 'highlight'), notes: keys(all.value.deleted, 'note'), bookmarks: keys(all.value.deleted, 'bookmark') },
    };
  });

  app.post(
    `${PLUGIN_PREFIX}/bookmarks`,
    { ...device, schema: { tags, summary: "merge the device's annotations", body: BookmarksBody, response: { 200: Merged, ...refused } } },
    async (req, reply: FastifyReply) => {
      const b = req.body as Type.Static<typeof BookmarksBody>;
      if (!b.book_uuid && !b.book_sha256) return sendFailure(reply, fail('validation', 'book_uuid or book_sha256 is required'));
      const found = await resolve(req, { uuid: b.book_uuid, sha256: b.book_sha256 });
      if (!found) return sendFailure(reply, notFound());
      // merged by the reading service, which owns annotations
      const merged = await reading(req, 'annotations-merge', {
        item_id: found.item,
        input: { bookmarks: b.bookmarks ?? [], notes: b.notes ?? [], highlights: b.highlights ?? [] },
      });
      if (!merged.ok) return sendFailure(reply, merged.error);
      return { media_item_id: found.item, matched_by: found.by, ...(merged.value as Record<string, unknown>) };
    },
  );
}
