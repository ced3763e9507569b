// Moves every user's reading data from some items to another: the keep of a hash conflict, or a
// removed book found again by its hash. Nothing is lost: of several positions the furthest becomes
// the current one and the others stay in the history; annotations, memberships and conflicts move.
import type { Reading } from '@bindery/contracts';
import type { Trx } from './db';
import { t } from '../handlers/context';
import { conflictOut, progressOut } from '../handlers/progress';
import { annotationSaved } from '../handlers/annotations';
import { recordHistory } from './history';

/**
 * Returns the users touched and, per user, the events that say what their data became (so a read
 * model follows a merge by folding ordinary events); `moved`: whether any row moved at all (a
 * history, a writer or a KOReader document can move with no user's current data).
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
  // history first, so the entries written below come after what each item had
  const lines = await t(trx).updateTable('progress_history').set({ item_id: to }).where('item_id', 'in', from).executeTakeFirst();
  // KOReader documents linked to a merged item follow it
  const docs = await t(trx).updateTable('kosync_documents').set({ item_id: to, progress_version: null }).where('item_id', 'in', from).executeTakeFirst();
  for (const [user, list] of byUser) {
    users.add(user);
    const best = list.reduce((a, b) => (Number(b.percentage) > Number(a.percentage) ? b : a));
    const kept = list.find((r) => r.item_id === to);
    for (const r of list) {
      if (r === best) continue;
      say(
        user,
        await recordHistory(trx, user, to, {
          percentage: r.percentage,
          position: r.position,
          client: r.client,
          device: r.device,
          reason: `${reason}: not the furthest`,
          recorded_at: now,
        }),
      );
    }
    const version = Math.max(...list.map((r) => Number(r.version))) + 1;
    const sha = [...new Set(list.flatMap((r) => r.sha256))];
    const values = {
      percentage: best.percentage,
      position: JSON.stringify(best.position),
      client: best.client,
      device: best.device,
      version,
      sha256: JSON.stringify(sha),
      updated_at: now,
    };
    await t(trx).deleteFrom('progress').where('user_id', '=', user).where('item_id', 'in', from).execute();
    if (kept) await t(trx).updateTable('progress').set(values).where('id', '=', kept.id).execute();
    else
      await t(trx)
        .insertInto('progress')
        .values({ id: best.id, user_id: user, item_id: to, created_at: best.created_at, ...values })
        .execute();
    say(user, await recordHistory(trx, user, to, { percentage: best.percentage, position: best.position, client: best.client, device: best.device, reason, recorded_at: now }));
    const row = await t(trx).selectFrom('progress').selectAll().where('user_id', '=', user).where('item_id', '=', to).executeTakeFirstOrThrow();
    for (const r of list) if (r.item_id !== to) say(user, { type: 'reading.progress-deleted.v1', data: { user_id: user, media_item_id: r.item_id } });
    say(user, { type: 'reading.progress-saved.v1', data: { user_id: user, media_item_id: to, progress: progressOut(row), sha256: row.sha256 } });
  }
  const devs = await t(trx).selectFrom('progress_devices').selectAll().where('item_id', 'in', from).execute();
  for (const d of devs)
    await t(trx)
      .insertInto('progress_devices')
      .values({ user_id: d.user_id, item_id: to, device: d.device })
      .onConflict((oc) => oc.doNothing())
      .execute();
  await t(trx).deleteFrom('progress_devices').where('item_id', 'in', from).execute();
  // what devices were given of the removed items' positions is not the kept item's (its next write
  // from such a device is judged as one that was given nothing of it)
  await t(trx).deleteFrom('progress_receipts').where('item_id', 'in', from).execute();
  const conflicts = await t(trx).updateTable('conflicts').set({ item_id: to }).where('item_id', 'in', from).returningAll().execute();
  for (const c of conflicts) {
    users.add(c.user_id);
    // an open conflict is now about the kept item: said again, with its new item
    if (c.status === 'open') say(c.user_id, { type: 'reading.progress-conflict-opened.v1', data: { user_id: c.user_id, conflict: conflictOut(c) } });
  }
  const notes = await t(trx).updateTable('annotations').set({ item_id: to }).where('item_id', 'in', from).returningAll().execute();
  for (const a of notes) {
    users.add(a.user_id);
    say(a.user_id, annotationSaved(a.user_id, a));
  }
  // ratings: the kept item's own, else the latest of the others
  const ratings = await t(trx).selectFrom('ratings').selectAll().where('item_id', 'in', all).orderBy('updated_at', 'desc').execute();
  const seen = new Set<string>(ratings.filter((r) => r.item_id === to).map((r) => r.user_id));
  for (const r of ratings) {
    users.add(r.user_id);
    if (r.item_id !== to) say(r.user_id, { type: 'reading.rating-deleted.v1', data: { user_id: r.user_id, media_item_id: r.item_id } });
    if (seen.has(r.user_id)) continue;
    seen.add(r.user_id);
    const row = await t(trx)
      .insertInto('ratings')
      .values({ ...r, item_id: to })
      .returningAll()
      .executeTakeFirstOrThrow();
    say(r.user_id, {
      type: 'reading.rating-set.v1',
      data: {
        user_id: r.user_id,
        media_item_id: to,
        rating: {
          media_item_id: to,
          rating: Number(row.rating),
          review: row.review,
          created_at: row.created_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
        },
      },
    });
  }
  await t(trx).deleteFrom('ratings').where('item_id', 'in', from).execute();
  const members = await t(trx)
    .selectFrom('collection_items')
    .innerJoin('collections', 'collections.id', 'collection_items.collection_id')
    .select(['collection_items.collection_id', 'collection_items.item_id', 'collection_items.added_at', 'collections.user_id'])
    .where('collection_items.item_id', 'in', from)
    .execute();
  for (const m of members) {
    const added = await t(trx)
      .insertInto('collection_items')
      .values({ collection_id: m.collection_id, item_id: to, added_at: m.added_at })
      .onConflict((oc) => oc.doNothing())
      .returning('item_id')
      .execute();
    users.add(m.user_id);
    say(m.user_id, {
      type: 'reading.collection-items-changed.v1',
      data: {
        user_id: m.user_id,
        collection_id: m.collection_id,
        added: added.length ? [to] : [],
        removed: [m.item_id],
        ...(added.length ? { added_at: [m.added_at.toISOString()] } : {}),
      },
    });
  }
  await t(trx).deleteFrom('collection_items').where('item_id', 'in', from).execute();
  const moved = users.size > 0 || devs.length > 0 || Number(lines.numUpdatedRows) > 0 || Number(docs.numUpdatedRows) > 0;
  return { users: [...users].sort(), events, moved };
}
