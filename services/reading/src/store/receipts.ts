// What a device was given of a user's positions (`progress_receipts`): the fold of
// `reading.progress-delivered.v1`, the table's only writer, part of reading's projection
// (store/projection.ts: in the append transaction and at a rebuild).
import type { Reading } from '@bindery/contracts';
import type { Trx } from './db';

type Delivered = Extract<Reading.ReadingEvent, { type: 'reading.progress-delivered.v1' }>['data'];

export async function foldDelivered(trx: Trx, schema: string, d: Delivered): Promise<void> {
  const t = trx.withSchema(schema);
  for (const x of d.delivered) {
    const cols = { progress_id: x.progress_id, version: x.version, percentage: x.percentage, received_at: d.delivered_at };
    await t
      .insertInto('progress_receipts')
      .values({ user_id: d.user_id, item_id: x.media_item_id, device: d.device, ...cols })
      .onConflict((oc) => oc.columns(['user_id', 'item_id', 'device']).doUpdateSet(cols))
      .execute();
  }
}
