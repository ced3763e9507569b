// The Kobo's library sync (`GET /v1/library/sync`): a page of what differs between what the Kobo
// has and what it should have (sync-state.ts; what it has is recorded by device-sync, sync-log.ts), as the store's entitlement, reading-state and tag
// entries, with our sync token (sync-token.ts) and `x-kobo-sync: continue` while more remains.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KoboContext } from './context';
import type { SpanMap } from './kepubs';
import { epubOf, type Item, type Progress, type TagRows } from './library';
import { bookEntitlement, bookMetadata, koboTime, readingState, tag } from './shapes';
import type { Difference } from './sync-state';
import { makeSyncToken, parseSyncToken } from './sync-token';

/** entries in one sync answer, as the store and its emulators page them */
export const SYNC_PAGE = 100;

export function koboSyncRoutes(app: FastifyInstance, k: KoboContext): void {
  const { P, hook, state, syncLog, access, itemsOf, lib, delivered } = k;
  app.get(`${P}/v1/library/sync`, hook, async (req, reply) => {
    const kobo = req.kobo!;
    const token = parseSyncToken(req.headers['x-kobo-synctoken']);
    // the token confirms what our earlier answers sent; one that is not ours for this Kobo (none, the
    // store's, another server's, garbage) means the device holds nothing we sent, so everything is
    // sent again — a full sync (Komga does this). Device-sync records either; the read model has it
    // when the answer comes back.
    const begun = await syncLog.begin(kobo, token);
    if (!begun.ok) return reply.code(502).send({ error: begun.error.message });
    const a = await access(req);
    const diff = await state.differences(kobo, a, SYNC_PAGE + 1, token.after ?? null);
    const bookIds = diff.filter((d) => d.key.startsWith('i:')).map((d) => d.key.slice(2));
    const [items, progress] = await Promise.all([itemsOf(req, bookIds), lib.progressOf(kobo.user_id, bookIds)]);
    const tagIds = diff.filter((d) => d.key.startsWith('t:')).map((d) => d.key.slice(2));
    const [tagRows, maps] = await Promise.all([lib.tagsOf(kobo.user_id, tagIds), lib.mapsFor(diff, items, progress)]);
    const entries: unknown[] = [];
    const sent: Difference[] = [];
    let more = false;
    for (const d of diff) {
      const page = await entriesOf(k, req, d, items, progress, tagRows, maps);
      if (entries.length + page.length > SYNC_PAGE) {
        more = true;
        break;
      }
      entries.push(...page);
      // a state sent without its place (the book's span map was not ready) is sent again next time
      const epub = items.get(d.key.slice(2)) && epubOf(items.get(d.key.slice(2))!);
      const unplaced = d.sver !== null && epub && (progress.get(d.key.slice(2))?.percentage ?? 1) < 1 && !maps.has(epub.sha256!);
      sent.push(unplaced ? { ...d, sver: `${d.sver}~unplaced` } : d);
    }
    const gen = await syncLog.record(kobo, sent);
    if (gen === null) return reply.code(502).send({ error: 'the sync could not be recorded' });
    // the reading states this answer gives the device: its next push of those books follows them
    await delivered(
      req,
      'kobo-sync',
      sent.filter((d) => d.key.startsWith('i:') && d.sver !== null && d.sver !== d.hsver && items.has(d.key.slice(2)) && progress.has(d.key.slice(2))),
      progress,
    );
    reply.header('x-kobo-synctoken', makeSyncToken(gen, token.store, more ? sent.at(-1)?.key : undefined, kobo.device_id));
    if (more) reply.header('x-kobo-sync', 'continue');
    return reply.send(entries);
  });
}

/** The entries one difference makes (none when the book became invisible between the two reads). */
async function entriesOf(
  k: KoboContext,
  req: FastifyRequest,
  d: Difference,
  items: Map<string, Item>,
  progress: Progress,
  tagRows: TagRows,
  maps: Map<string, SpanMap | null>,
): Promise<unknown[]> {
  const id = d.key.slice(2);
  if (d.key.startsWith('t:')) {
    const t = tagRows.get(id);
    if (d.ever === null || !t) return [{ DeletedTag: { Tag: { Id: id, LastModified: koboTime(new Date()) } } }];
    return [{ [d.hever === null ? 'NewTag' : 'ChangedTag']: tag(id, t.name, t.created, t.modified, t.items) }];
  }
  const item = items.get(id);
  if (d.ever === null || !item) {
    const now = new Date().toISOString();
    return [{ ChangedEntitlement: { BookEntitlement: bookEntitlement(id, now, now, true) } }];
  }
  const out: unknown[] = [];
  const facts = await k.lib.stateFacts(item, progress.get(id), maps);
  const rs = readingState(id, item.created_at, facts);
  if (d.ever !== d.hever) {
    const epub = epubOf(item)!;
    const ent = {
      BookEntitlement: bookEntitlement(id, item.created_at, item.updated_at, false),
      BookMetadata: bookMetadata(item, epub, null, { base: k.base(req) }),
      ReadingState: rs,
    };
    out.push(d.hever === null ? { NewEntitlement: ent } : { ChangedEntitlement: ent });
  }
  // the device ignores a state inside an entitlement: it travels on its own as well
  if (d.sver !== null && d.sver !== d.hsver) out.push({ ChangedReadingState: { ReadingState: rs } });
  return out;
}
