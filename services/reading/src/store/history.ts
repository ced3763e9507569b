// The position history: a line per save, deletion, conflict outcome and merge, each in an event of
// the transaction that writes it: a save's in its `reading.progress-saved.v1` (`history`), the others
// as `reading.progress-history-recorded.v1`.
import type { Reading } from '@bindery/contracts';
import type { StoredPosition } from './db';

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

/** A history line as its own event (a deletion, a conflict's outcome, a merge), for the caller to append: the projection writes it. */
export const historyRecorded = (user: string, item: string, h: HistoryLine): Reading.ReadingEvent => ({
  type: 'reading.progress-history-recorded.v1',
  data: { user_id: user, media_item_id: item, entry: historyEntry(h) },
});
