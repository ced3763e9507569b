// One book on a Kobo: its metadata, its reading state (read, and written by the device to the
// reading service, its KoboSpan place turned into ours), and its removal from the device (recorded
// with device-sync; the file stays).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUuid } from '@bindery/contracts';
import type { KoboContext } from './context';
import { locationToPlace } from './kepubs';
import { epubOf, type Item } from './library';
import { bookMetadata, koboTime, readingState } from './shapes';

export function koboBookRoutes(app: FastifyInstance, k: KoboContext): void {
  const { P, hook, deps, syncLog, lib, base, bookOf, delivered } = k;
  app.get(`${P}/v1/library/:id/metadata`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    return [bookMetadata(item, epubOf(item)!, null, { base: base(req) })];
  });

  app.get(`${P}/v1/library/:id/state`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const progress = await lib.progressOf(req.kobo!.user_id, [item.id]);
    const p = progress.get(item.id);
    if (p) await delivered(req, 'kobo-state', [{ key: `i:${item.id}` }], progress);
    return [readingState(item.id, item.created_at, await lib.stateFacts(item, p))];
  });

  app.put(`${P}/v1/library/:id/state`, hook, async (req, reply) => {
    const item = await bookOf(req, reply);
    if (!item) return reply;
    const put = await progressInput(k, req, item);
    if (!put) return reply.code(400).send({ error: 'invalid request' });
    const at = koboTime(new Date());
    let result = 'Success';
    if (put.write) {
      const r = await deps.reading(req, 'progress-put', { item_id: item.id, input: put.input });
      if (!r.ok) result = 'Failure';
      else {
        // the device has the state it wrote: it is not sent back at the next sync
        const p = (await lib.progressOf(req.kobo!.user_id, [item.id])).get(item.id);
        if (p) {
          const known = await syncLog.stateKnown(req.kobo!, item.id, p.updated_at);
          if (!known.ok) req.log.warn({ err: known.error.message }, 'kobo: the state the device wrote was not recorded; the next sync sends it back');
        }
      }
    }
    return {
      RequestResult: result,
      UpdateResults: [
        {
          EntitlementId: item.id,
          CurrentBookmarkResult: { Result: result },
          StatisticsResult: { Result: put.input.spent_seconds === undefined ? 'Ignored' : result },
          StatusInfoResult: { Result: result },
          LastModified: at,
          PriorityTimestamp: at,
        },
      ],
    };
  });

  // removed from the device (or archived): recorded, never the file
  app.delete(`${P}/v1/library/:id`, hook, async (req, reply) => {
    const id = (req.params as { id: string }).id;
    if (!isUuid(id)) return reply.code(400).send({ error: 'invalid media item id' });
    const r = await deps.devices('kobo-book-remove', { device: { device_id: req.kobo!.device_id, user_id: req.kobo!.user_id }, input: { media_item_id: id } });
    // its event also takes the book out of what the device has (the read model has folded it by now)
    if (!r.ok) return reply.code(502).send({ error: r.error.message });
    return reply.code(204).send();
  });
}

/** the most reading minutes a Kobo may state for one book (ten years): reading's limit on `spent_seconds` */
const KOBO_MAX_SPENT_MINUTES = 10 * 366 * 1440;

/**
 * The reading service's `progress-put` input for the one reading state a Kobo sends, and whether
 * it is written at all; null when the body is not one valid state (the answer is 400).
 */
async function progressInput(k: KoboContext, req: FastifyRequest, item: Item): Promise<{ input: Record<string, unknown>; write: boolean } | null> {
  const body = req.body as { ReadingStates?: unknown } | null;
  const states = body && typeof body === 'object' && Array.isArray(body.ReadingStates) ? body.ReadingStates : null;
  if (!states || states.length !== 1 || typeof states[0] !== 'object' || states[0] === null) return null;
  const s = states[0] as {
    CurrentBookmark?: { ProgressPercent?: unknown; Location?: { Value?: unknown; Type?: unknown; Source?: unknown } };
    StatusInfo?: { Status?: unknown };
    Statistics?: { SpentReadingMinutes?: unknown };
  };
  const status = s.StatusInfo?.Status;
  const rawPct = s.CurrentBookmark?.ProgressPercent;
  if (rawPct !== undefined && rawPct !== null && (typeof rawPct !== 'number' || !Number.isFinite(rawPct) || rawPct < 0 || rawPct > 100)) return null;
  const pct = typeof rawPct === 'number' ? rawPct : null;
  const loc = s.CurrentBookmark?.Location;
  const input: Record<string, unknown> = { client: 'kobo', device: req.kobo!.name };
  // the device's own count of its reading time in the book (decision 120): kept with the position
  const spent = s.Statistics?.SpentReadingMinutes;
  if (spent !== undefined && spent !== null) {
    if (typeof spent !== 'number' || !Number.isInteger(spent) || spent < 0 || spent > KOBO_MAX_SPENT_MINUTES) return null;
    input.spent_seconds = spent * 60;
  }
  let write = true;
  if (status === 'Finished') {
    // the device sends the first span with Finished: the state is what counts, not that place
    input.percentage = 1;
  } else {
    if (pct !== null) input.percentage = pct / 100;
    const epub = epubOf(item)!;
    if (loc && loc.Type === 'KoboSpan' && typeof loc.Value === 'string' && typeof loc.Source === 'string' && loc.Value.length <= 200 && loc.Source.length <= 2048) {
      const map = await k.deps.kepubs.spans(epub.sha256!).catch(() => null);
      const place = map && locationToPlace(map, loc.Source, loc.Value);
      if (place) Object.assign(input, { anchor_href: place.anchor_href, css_selector: 'body', char_offset: place.offset });
    }
    // a book merely on the device (ReadyToRead at the start) writes nothing
    if (status === 'ReadyToRead' && !(pct && pct > 0)) write = false;
    if (input.percentage === undefined && input.anchor_href === undefined) write = false;
  }
  return { input, write };
}
