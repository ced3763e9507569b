// Moves every user's reading data from some items to another: the keep of a hash conflict, or a
// removed book found again by its hash. Nothing is lost: of several positions the furthest becomes
// the current one and the others stay in the history; annotations, memberships and conflicts move.
import type { Trx } from '@bindery/platform';
import { t } from '../handlers/context';

export async function moveItemData(trx: Trx, fromIds: string[], to: string, now: Date, reason: string): Promise<string[]> {
  const from = fromIds.filter((f) => f !== to);
  if (from.length === 0) return [];
  const all = [to, ...from];
  const users = new Set<string>();
  const rows = await t(trx).selectFrom('progress').selectAll().where('item_id', 'in', all).execute();
  const byUser = new Map<string, typeof rows>();
  for (const r of rows) byUser.set(r.user_id as string, [...(byUser.get(r.user_id as string) ?? []), r]);
  // history first, so the entries written below come after what each item had
  await t(trx).updateTable('progress_history').set({ item_id: to }).where('item_id', 'in', from).execute();
  for (const [user, list] of byUser) {
    users.add(user);
    const best = list.reduce((a, b) => (Number(b.percentage) > Number(a.percentage) ? b : a));
    const kept = list.find((r) => r.item_id === to);
    for (const r of list) {
      if (r === best) continue;
      await t(trx).insertInto('progress_history').values({ user_id: user, item_id: to, percentage: r.percentage, position: JSON.stringify(r.position), client: r.client, device: r.device, reason: `${reason}: not the furthest`, recorded_at: now }).execute();
    }
    const version = Math.max(...list.map((r) => Number(r.version))) + 1;
    const sha = [...new Set(list.flatMap((r) => r.sha256 as string[]))];
    const values = { percentage: best.percentage, position: JSON.stringify(best.position), client: best.client, device: best.device, version, sha256: JSON.stringify(sha), updated_at: now };
    await t(trx).deleteFrom('progress').where('user_id', '=', user).where('item_id', 'in', from).execute();
    if (kept) await t(trx).updateTable('progress').set(values).where('id', '=', kept.id).execute();
    else await t(trx).insertInto('progress').values({ id: best.id, user_id: user, item_id: to, created_at: best.created_at, ...values }).execute();
    await t(trx).insertInto('progress_history').values({ user_id: user, item_id: to, percentage: best.percentage, position: JSON.stringify(best.position), client: best.client, device: best.device, reason, recorded_at: now }).execute();
  }
  const devs = await t(trx).selectFrom('progress_devices').selectAll().where('item_id', 'in', from).execute();
  for (const d of devs) await t(trx).insertInto('progress_devices').values({ user_id: d.user_id, item_id: to, device: d.device }).onConflict((oc) => oc.doNothing()).execute();
  await t(trx).deleteFrom('progress_devices').where('item_id', 'in', from).execute();
  for (const table of ['conflicts', 'annotations']) {
    const moved = await t(trx).updateTable(table).set({ item_id: to }).where('item_id', 'in', from).returning('user_id').execute();
    moved.forEach((m) => users.add(m.user_id as string));
  }
  // ratings: the kept item's own, else the latest of the others
  const ratings = await t(trx).selectFrom('ratings').selectAll().where('item_id', 'in', all).orderBy('updated_at', 'desc').execute();
  const seen = new Set<string>(ratings.filter((r) => r.item_id === to).map((r) => r.user_id as string));
  for (const r of ratings) {
    users.add(r.user_id as string);
    if (seen.has(r.user_id as string)) continue;
    seen.add(r.user_id as string);
    await t(trx).insertInto('ratings').values({ ...r, item_id: to }).execute();
  }
  await t(trx).deleteFrom('ratings').where('item_id', 'in', from).execute();
  const members = await t(trx).selectFrom('collection_items').selectAll().where('item_id', 'in', from).execute();
  for (const m of members) await t(trx).insertInto('collection_items').values({ collection_id: m.collection_id, item_id: to, added_at: m.added_at }).onConflict((oc) => oc.doNothing()).execute();
  await t(trx).deleteFrom('collection_items').where('item_id', 'in', from).execute();
  return [...users].sort();
}
