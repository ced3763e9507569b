// The KOReader plugin's annotations, in the plugin's shape: the metadata fetch (the book's position,
// its live annotations and the tombstones of the deleted ones) and the merge of what the device
// has. Palette names ↔ the web's hex, an echo without a colour changes nothing, and a deleted key
// never comes back. Places are the reading service's canonical spans: pos0/pos1 go in as XPointers
// and come back as XPointers derived from the span, whichever client made the annotation.
import Type from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Reading, type Result } from '@bindery/contracts';
import { sendFailure } from '../http/reply';
import { PLUGIN_PREFIX, type PluginContext } from './plugin-context';
import { BookmarksBody, Merged, Metadata, refused, tags } from './plugin-schemas';

type Kind = Reading.AnnotationRecord['type'];
/** an annotation as the reading service answers it */
type Stored = Reading.AnnotationRecord;

/** A book's annotations, live and deleted. */
type Listed = Result<{ live: Stored[]; deleted: Stored[] }>;

/** The key a device knows an annotation by: its dedup_key, or (made on the web) its id. */
const keyOf = (a: Stored) => a.dedup_key ?? a.id;

/** The caller's annotations of a book, live and deleted. */
async function annotations({ reading }: PluginContext, req: FastifyRequest, item: string): Promise<Listed> {
  const live: Stored[] = [];
  for (const kind of ['highlight', 'note', 'bookmark'] as const) {
    const r = await reading(req, 'annotations-list', { item_id: item, kind });
    if (!r.ok) return r;
    live.push(...r.value.data);
  }
  const d = await reading(req, 'annotations-deleted', { item_id: item });
  if (!d.ok) return d;
  return { ok: true, value: { live, deleted: d.value.data } };
}

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

export function pluginMetadataRoute(app: FastifyInstance, ctx: PluginContext): void {
  const { reading, device, access, notFound, recordOf } = ctx;
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
    const progress = p.ok ? p.value : null;
    const all = await annotations(ctx, req, item);
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
}

export function pluginBookmarksRoute(app: FastifyInstance, { reading, device, notFound, resolve }: PluginContext): void {
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
      return { media_item_id: found.item, matched_by: found.by, ...merged.value };
    },
  );
}
