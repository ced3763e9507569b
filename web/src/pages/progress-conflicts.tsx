// A book's open progress conflicts on its page: two devices disagree about where the reader is
// (a device's first position for a book already mid-read elsewhere, or a write from an older
// version). The reader picks the place to go on from; the reading service settles it.
import { type I18n, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { PERCENT } from './library';

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

const placeOf = ({ t, number }: I18n, p: number | undefined) => (typeof p === 'number' ? number(p, PERCENT) : t('conflict.unknownPlace'));
const whoOf = ({ t }: I18n, s: Side) =>
  s.device && s.device !== s.client ? `${s.device} (${s.client ?? t('conflict.device')})` : (s.client ?? s.device ?? t('conflict.anotherDevice'));

export function ProgressConflicts({ item, conflicts }: { item: string; conflicts: ProgressConflict[] }) {
  const i18n = useI18n();
  const { t } = i18n;
  if (conflicts.length === 0) return null;
  const at = (p: number | undefined) => placeOf(i18n, p);
  const who = (s: Side) => whoOf(i18n, s);
  return (
    <section id="progress-conflicts" class="card" aria-labelledby="conflicts-title">
      <h2 id="conflicts-title">{t('conflict.title')}</h2>
      {conflicts.map((c) => (
        <form key={c.id} class="conflict" hx-post={`/books/${item}/conflicts/${c.id}`} hx-target={`#conflict-outcome-${c.id}`} data-conflict={c.id}>
          <p>
            <span class="conflict-incoming">{t('conflict.incoming', { who: who(c.incoming), at: at(c.incoming.percentage) })}</span>
            {t('conflict.separator')}
            <span class="conflict-current">{t('conflict.current', { at: at(c.current.percentage), who: who(c.current) })}</span>
          </p>
          <div class="row">
            <button type="submit" name="keep" value="incoming" class="primary" id={`keep-incoming-${c.id}`}>
              {t('conflict.goOn', { at: at(c.incoming.percentage) })}
            </button>
            <button type="submit" name="keep" value="current" id={`keep-current-${c.id}`}>
              {t('conflict.stay', { at: at(c.current.percentage) })}
            </button>
          </div>
          <Outcome id={`conflict-outcome-${c.id}`} />
        </form>
      ))}
    </section>
  );
}
