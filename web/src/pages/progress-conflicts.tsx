// A book's open progress conflicts on its page: two devices disagree about where the reader is
// (a device's first position for a book already mid-read elsewhere, or a write from an older
// version). The reader picks the place to go on from; the reading service settles it.
import { Outcome } from '../layout';
import { percent } from './books';

interface Side {
  percentage?: number;
  device?: string;
  client?: string;
  updated_at?: string;
  submitted_at?: string;
}
export interface ProgressConflict {
  id: string;
  reason: string;
  current: Side;
  incoming: Side;
  created_at: string;
}

const at = (p: number | undefined) => (typeof p === 'number' ? percent(p) : 'an unknown place');
const who = (s: Side) => (s.device && s.device !== s.client ? `${s.device} (${s.client ?? 'device'})` : (s.client ?? s.device ?? 'another device'));

export function ProgressConflicts({ item, conflicts }: { item: string; conflicts: ProgressConflict[] }) {
  if (conflicts.length === 0) return null;
  return (
    <section id="progress-conflicts" class="card" aria-labelledby="conflicts-title">
      <h2 id="conflicts-title">Two places in this book</h2>
      {conflicts.map((c) => (
        <form key={c.id} class="conflict" hx-post={`/books/${item}/conflicts/${c.id}`} hx-target={`#conflict-outcome-${c.id}`} data-conflict={c.id}>
          <p>
            <span class="conflict-incoming">{`${who(c.incoming)} is at ${at(c.incoming.percentage)}`}</span>
            {'; '}
            <span class="conflict-current">{`the place kept here is ${at(c.current.percentage)}, from ${who(c.current)}.`}</span>
          </p>
          <div class="row">
            <button type="submit" name="keep" value="incoming" class="primary" id={`keep-incoming-${c.id}`}>
              {`Go on from ${at(c.incoming.percentage)}`}
            </button>
            <button type="submit" name="keep" value="current" id={`keep-current-${c.id}`}>
              {`Stay at ${at(c.current.percentage)}`}
            </button>
          </div>
          <Outcome id={`conflict-outcome-${c.id}`} />
        </form>
      ))}
    </section>
  );
}
