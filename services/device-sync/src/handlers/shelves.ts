// Shelves: which of the user's collections (the reading service's) go onto a device. The gateway has
// checked the collection is the caller's; device-sync keeps the mapping and queues the books.
import { ok } from '@bindery/contracts';
import type { Trx } from '../store/db';
import { lockCollection, lockRows, t, type Ctx } from './context';
import { ownDevice } from './devices';
import { enqueue } from './queue';
import { bad, isUuid, M, no, notFound, type Answer, type ByUser } from './util';

export async function addShelf(ctx: Ctx, req: ByUser<'shelf-add'>): Answer<'shelf-add'> {
  const cid = req.input?.collection_id;
  if (cid === undefined || cid === null || cid === '') return no(bad(M.collectionIdRequired));
  if (!isUuid(cid)) return no(bad(M.invalidCollectionId));
  const name = typeof req.input?.collection_name === 'string' ? req.input.collection_name.slice(0, 100) : 'a collection';
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    // only a request for this device adds its shelves, and the device is locked: none comes in between
    await lockCollection(trx, cid.toLowerCase());
    if (await shelf(trx, d.value.id, cid.toLowerCase())) return ok({ message: 'shelf already on device', collection_id: cid.toLowerCase() });
    const now = ctx.now();
    await ctx.emit(trx, d.value.user_id, [
      {
        type: 'device-sync.shelf-added.v1',
        data: { user_id: d.value.user_id, device_id: d.value.id, collection_id: cid.toLowerCase(), added_at: now.toISOString(), collection_name: name },
      },
    ]);
    const items = await t(trx).selectFrom('collection_items').select('item_id').where('collection_id', '=', cid.toLowerCase()).execute();
    for (const i of items) await enqueue(ctx, trx, d.value.id, d.value.user_id, i.item_id, 'download', onShelf(name));
    return ok({ message: 'shelf added', collection_id: cid.toLowerCase() });
  });
}

/** Why a book the shelf brought is queued: the collection's name, as the shelf was made with it. */
export const onShelf = (name: string | null): string => `on the shelf "${name ?? 'a collection'}"`;

export async function removeShelf(ctx: Ctx, req: ByUser<'shelf-remove'>): Answer<'shelf-remove'> {
  const cid = req.input?.collection_id;
  if (!isUuid(cid)) return no(bad(M.invalidCollectionId));
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    if (!(await shelf(trx, d.value.id, cid.toLowerCase()))) return no(notFound(M.shelfNotFound));
    await ctx.emit(trx, d.value.user_id, [{ type: 'device-sync.shelf-removed.v1', data: { user_id: d.value.user_id, device_id: d.value.id, collection_id: cid.toLowerCase() } }]);
    return ok({ message: 'shelf removed' });
  });
}

export async function clearShelves(ctx: Ctx, req: ByUser<'shelves-clear'>): Answer<'shelves-clear'> {
  return ctx.tx(async (trx) => {
    const d = await ownDevice(trx, req, true);
    if (!d.ok) return d;
    await clearDeviceShelves(ctx, trx, d.value.user_id, d.value.id);
    return ok({ message: 'shelves cleared' });
  });
}

/** The collection's shelf on the device, locked until the transaction ends; undefined when there is none. */
function shelf(trx: Trx, device: string, collection: string) {
  return t(trx).selectFrom('shelves').select('added_at').where('device_id', '=', device).where('collection_id', '=', collection).forUpdate().executeTakeFirst();
}

async function clearDeviceShelves(ctx: Ctx, trx: Trx, user: string, device: string): Promise<void> {
  await lockRows(trx, 'shelves', [device]);
  await ctx.emit(trx, user, [{ type: 'device-sync.shelves-cleared.v1', data: { user_id: user, device_id: device } }]);
}
