// A book's highlights and notes (the reading service's annotations, KOReader's among them): the
// text, the note and where in the book; delete one, and restore what was deleted. An htmx fragment
// of the book page, fetched just after it (each list is a request to the reading service).
import { Outcome } from '../layout';
import { percent } from './books';

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
  const where = typeof a.position?.percentage === 'number' ? ` at ${percent(a.position.percentage)}` : '';
  const label = `${a.type === 'note' ? 'note' : 'highlight'}${where}`;
  return (
    <li class="annotation" data-annotation={a.id}>
      {a.text && <blockquote class="annotation-text">{a.text}</blockquote>}
      {a.note && <p class="annotation-note">{a.note}</p>}
      <p class="muted">
        {a.type === 'note' ? 'Note' : 'Highlight'}
        {where}{' '}
        {deleted ? (
          <button type="button" hx-post={`/api/annotations/${a.id}/restore`} hx-target="#annotations-outcome" data-reload id={`restore-${a.id}`} aria-label={`Restore ${label}`}>
            Restore
          </button>
        ) : (
          <button type="button" hx-delete={`/api/${SEGMENT[a.type]}/${a.id}`} hx-target="#annotations-outcome" data-reload id={`delete-${a.id}`} aria-label={`Delete ${label}`}>
            Delete
          </button>
        )}
      </p>
    </li>
  );
}

export function Annotations({ live, deleted }: { live: Annotation[]; deleted: Annotation[] }) {
  const shown = deleted.filter((a) => a.type !== 'bookmark');
  return (
    <div id="annotations">
      {live.length === 0 ? (
        <p class="muted" id="no-annotations">
          No highlights or notes yet.
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
          <h3>Recently deleted</h3>
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
