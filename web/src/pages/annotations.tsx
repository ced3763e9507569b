// A book's highlights and notes (the reading service's annotations, KOReader's among them): the
// text, the note and where in the book; delete one, and restore what was deleted. An htmx fragment
// of the book page, fetched just after it (each list is a request to the reading service).
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { PERCENT } from './library';

export interface Annotation {
  id: string;
  type: 'highlight' | 'note' | 'bookmark';
  text: string | null;
  note: string | null;
  position?: { percentage?: number | null } | null;
  deleted_at: string | null;
}

const SEGMENT: Record<string, string> = { highlight: 'highlights', note: 'notes', bookmark: 'bookmarks' };

function Entry({ a, deleted }: { a: Annotation; deleted: boolean }) {
  const { t, number } = useI18n();
  const at = typeof a.position?.percentage === 'number' ? number(a.position.percentage, PERCENT) : null;
  const kind = a.type === 'note' ? 'note' : 'highlight';
  const where = at === null ? t(`notes.${kind}`) : t(`notes.${kind}At`, { at });
  const label = at === null ? t(`notes.${kind}.lower`) : t(`notes.${kind}At.lower`, { at });
  return (
    <li class="annotation" data-annotation={a.id}>
      {a.text && <blockquote class="annotation-text">{a.text}</blockquote>}
      {a.note && <p class="annotation-note">{a.note}</p>}
      <p class="muted">
        {where}{' '}
        {deleted ? (
          <button
            type="button"
            hx-post={`/api/annotations/${a.id}/restore`}
            hx-target="#annotations-outcome"
            data-reload
            id={`restore-${a.id}`}
            aria-label={t('notes.restoreLabel', { what: label })}
          >
            {t('notes.restore')}
          </button>
        ) : (
          <button
            type="button"
            hx-delete={`/api/${SEGMENT[a.type]}/${a.id}`}
            hx-target="#annotations-outcome"
            data-reload
            id={`delete-${a.id}`}
            aria-label={t('notes.deleteLabel', { what: label })}
          >
            {t('library.delete')}
          </button>
        )}
      </p>
    </li>
  );
}

export function Annotations({ live, deleted }: { live: Annotation[]; deleted: Annotation[] }) {
  const shown = deleted.filter((a) => a.type !== 'bookmark');
  const { t } = useI18n();
  return (
    <div id="annotations">
      {live.length === 0 ? (
        <p class="muted" id="no-annotations">
          {t('notes.none')}
        </p>
      ) : (
        <ul class="plain" id="annotation-list">
          {live.map((a) => (
            <Entry key={a.id} a={a} deleted={false} />
          ))}
        </ul>
      )}
      {shown.length > 0 && (
        <>
          <h3>{t('notes.deleted')}</h3>
          <ul class="plain" id="deleted-list">
            {shown.map((a) => (
              <Entry key={a.id} a={a} deleted />
            ))}
          </ul>
        </>
      )}
      <Outcome id="annotations-outcome" />
    </div>
  );
}
