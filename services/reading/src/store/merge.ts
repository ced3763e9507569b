// Moves every user's reading data from some items to another: the keep of a hash conflict, or a
// removed book found again by its hash (decided here, written by the projection's folds of the events). Nothing is lost: of several positions the furthest becomes
// the current one and the others stay in the history; annotations, memberships and conflicts move.
import type { Reading } from '@bindery/contracts';
import type { Trx } from './db';
import { t } from '../handlers/context';
import { conflictOut, progressOut } from '../handlers/progress';
import { annotationSaved } from '../handlers/annotations';
import { historyRecorded } from './history';

/**
 * Decides, from the tables, what moving the items' data makes of it: nothing is written here. The
 * caller appends `items-merged` (or `item-data-restored`) first, whose fold moves the history,
 * writers, KOReader documents and conflicts, then each user's events (`events`), whose folds say
 * what their current data became. Returns the users touched; `moved`: whether any row moves at all
 * (a history, a writer or a KOReader document can move with no user's current data).
 */
export async function moveItemData(
  trx: Trx,
  fromIds: string[],
  to: string,
  now: Date,
  reason: string,
): Promise<{ users: string[]; events: Map<string, Reading.ReadingEvent[]>; moved: boolean }> {
  const from = fromIds.filter((f) => f !== to);
  const events = new Map<string, Reading.ReadingEvent[]>();
  const say = (user: string, e: Reading.ReadingEvent) => events.set(user, [...(events.get(user) ?? []), e]);
  if (from.length === 0) return { users: [], events, moved: false };
  const all = [to, ...from];
  const users = new Set<string>();
  const rows = await t(trx).selectFrom('progress').selectAll().where('item_id', 'in', all).execute();
  const byUser = new Map<string, typeof rows>();
  for (const r of rows) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r]);
  // the history and KOReader documents of a merged item follow it (the fold of items-merged), before the lines said below
  const count = (table: 'progress_history' | 'kosync_documents' | 'progress_devices') =>
    t(trx)
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('item_id', 'in', from)
      .executeTakeFirstOrThrow()
      .then((r) => Number(r.n));
  const lines = await count('progress_history');
  const docs = await count('kosync_documents');
  const devs = await count('progress_devices');
  for (const [user, list] of byUser) {
    users.add(user);
    const best = list.reduce((a, b) => (Number(b.percentage) > Number(a.percentage) ? b : a));
    const kept = list.find((r) => r.item_id === to);
    for (const r of list) {
      if (r === best) continue;
      say(
        user,
        historyRecorded(user, to, {
          percentage: r.percentage,
          position: r.position,
          client: r.client,
          device: r.device,
          reason: `${reason}: not the furthest`,
          recorded_at: now,
        }),
      );
    }
    say(user, historyRecorded(user, to, { percentage: best.percentage, position: best.position, client: best.client, device: best.device, reason, recorded_at: now }));
    for (const r of list) if (r.item_id !== to) say(user, { type: 'reading.progress-deleted.v1', data: { user_id: user, media_item_id: r.item_id } });
    const row = {
      ...(kept ?? best),
      item_id: to,
      percentage: best.percentage,
      position: best.position,
      client: best.client,
      device: best.device,
      version: Math.max(...list.map((r) => Number(r.version))) + 1,
      sha256: [...new Set(list.flatMap((r) => r.sha256))],
      updated_at: now,
    };
    say(user, { type: 'reading.progress-saved.v1', data: { user_id: user, media_item_id: to, progress: progressOut(row), sha256: row.sha256 } });
  }
  const conflicts = await t(trx).selectFrom('conflicts').selectAll().where('item_id', 'in', from).execute();
  for (const c of conflicts) {
    users.add(c.user_id);
    // an open conflict is now about the kept item: said again, with its new item
    if (c.status === 'open') say(c.user_id, { type: 'reading.progress-conflict-opened.v1', data: { user_id: c.user_id, conflict: conflictOut({ ...c, item_id: to }) } });
  }
  const notes = await t(trx).selectFrom('annotations').selectAll().where('item_id', 'in', from).execute();
  for (const a of notes) {
    users.add(a.user_id);
    say(a.user_id, annotationSaved(a.user_id, { ...a, item_id: to }));
  }
  // ratings: the kept item's own, else the latest of the others
  const ratings = await t(trx).selectFrom('ratings').selectAll().where('item_id', 'in', all).orderBy('updated_at', 'desc').execute();
  const seen = new Set<string>(ratings.filter((r) => r.item_id === to).map((r) => r.user_id));
  for (const r of ratings) {
    users.add(r.user_id);
    if (r.item_id !== to) say(r.user_id, { type: 'reading.rating-deleted.v1', data: { user_id: r.user_id, media_item_id: r.item_id } });
    if (seen.has(r.user_id)) continue;
    seen.add(r.user_id);
    say(r.user_id, {
      type: 'reading.rating-set.v1',
      data: {
        user_id: r.user_id,
        media_item_id: to,
        rating: { media_item_id: to, rating: Number(r.rating), review: r.review, created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString() },
      },
    });
  }
  const members = await t(trx)
    .selectFrom('collection_items')
    .innerJoin('collections', 'collections.id', 'collection_items.collection_id')
    .select(['collection_items.collection_id', 'collection_items.item_id', 'collection_items.added_at', 'collections.user_id'])
    .where('collection_items.item_id', 'in', all)
    .execute();
  // the collections the kept item is in already, and joins as members move
  const holding = new Set(members.filter((m) => m.item_id === to).map((m) => m.collection_id));
  for (const m of members) {
    if (m.item_id === to) continue;
    const adds = !holding.has(m.collection_id);
    holding.add(m.collection_id);
    users.add(m.user_id);
    say(m.user_id, {
      type: 'reading.collection-items-changed.v1',
      data: {
        user_id: m.user_id,
        collection_id: m.collection_id,
        added: adds ? [to] : [],
        removed: [m.item_id],
        ...(adds ? { added_at: [m.added_at.toISOString()] } : {}),
      },
    });
  }
  const moved = users.size > 0 || devs > 0 || lines > 0 || docs > 0;
  return { users: [...users].sort(), events, moved };
}
