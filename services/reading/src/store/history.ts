// The position history: a line per save, deletion, conflict outcome and merge, each in an event of
// the transaction that writes it: a save's in its `reading.progress-saved.v1` (`history`), the others
// as `reading.progress-history-recorded.v1`.
import type { Reading } from '@bindery/contracts';
import type { StoredPosition, Trx } from './db';
import { t } from '../handlers/context';

export interface HistoryLine {
  position: StoredPosition;
  percentage: number;
  client: string;
  device: string;
  reason: string;
  recorded_at: Date;
}

/** A history line as an event carries it. */
export const historyEntry = (h: HistoryLine): Reading.ProgressHistoryEntry => ({ ...h, recorded_at: h.recorded_at.toISOString() });

const historyRecorded = (user: string, item: string, h: HistoryLine): Reading.ReadingEvent => ({
  type: 'reading.progress-history-recorded.v1',
  data: { user_id: user, media_item_id: item, entry: historyEntry(h) },
});

/** Writes a history line; returns its event, for the caller to append in the same transaction. */
export async function recordHistory(trx: Trx, user: string, item: string, h: HistoryLine): Promise<Reading.ReadingEvent> {
  await t(trx)
    .insertInto('progress_history')
    .values({ user_id: user, item_id: item, ...h, position: JSON.stringify(h.position) })
    .execute();
  return historyRecorded(user, item, h);
}
