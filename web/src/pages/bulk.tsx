// The selection of the library grid and the series page (issue 43): a checkbox on each cover (shift-
// click ticks a range, edit.js), "select all matching" (every book the current filters match,
// gathered by the server through the search), and a bar of actions for the selection: set the
// series, add or remove tags, set the authors, the language or the reading direction (for people
// who may edit), mark read, unread or reset progress (anyone, for their own progress), and send the
// books to the person's e-reader (when this server mails).
import { Outcome } from '../layout';
import type { Item } from './books';

/** What "all matching" means on this page: the library's filters (its query string) or one series. */
export type SelectionScope = { kind: 'library'; query: string } | { kind: 'series'; name: string };

/** The checkbox on a cover: part of the selection form wherever it sits in the page. */
export function Pick({ item }: { item: Item }) {
  return (
    <label class="pick" for={`pick-${item.id}`}>
      <input type="checkbox" id={`pick-${item.id}`} class="pick-box" form="selection" name="ids" value={item.id} />
      <span class="visually-hidden">{`Select ${item.title}`}</span>
    </label>
  );
}

const EDITS: { value: string; label: string }[] = [
  { value: 'series', label: 'Set the series' },
  { value: 'add_tags', label: 'Add tags' },
  { value: 'remove_tags', label: 'Remove tags' },
  { value: 'authors', label: 'Set the authors' },
  { value: 'language', label: 'Set the language' },
  { value: 'reading_direction', label: 'Set the reading direction' },
];

export function SelectionBar({ total, scope, editor, mail = false }: { total: number; scope: SelectionScope; editor: boolean; mail?: boolean }) {
  return (
    <form id="selection" class="selection-bar card" hx-post="/library/bulk" hx-target="#selection-outcome" aria-labelledby="selection-title">
      <h2 id="selection-title">Selected books</h2>
      <p id="selection-count" class="muted" aria-live="polite">
        Tick the books to act on, or take every match.
      </p>
      <div class="selection-controls">
        <label class="inline" for="select-all">
          <input type="checkbox" id="select-all" name="all_matching" value="1" data-total={String(total)} />{' '}
          {scope.kind === 'series' ? `Every book of the series (${total})` : `All ${total} matching books`}
        </label>
        {scope.kind === 'library' ? <input type="hidden" name="query" value={scope.query} /> : <input type="hidden" name="series_scope" value={scope.name} />}
        <div>
          <label for="selection-action">Action</label>
          <select id="selection-action" name="action">
            <option value="read">Mark read</option>
            <option value="unread">Mark unread</option>
            <option value="reset">Reset progress</option>
            {mail && <option value="send">Send to my e-reader</option>}
            {editor &&
              EDITS.map((e) => (
                <option key={e.value} value={e.value}>
                  {e.label}
                </option>
              ))}
          </select>
        </div>
        {editor && (
          <div class="grow">
            <label for="selection-value">Value</label>
            <input id="selection-value" name="value" maxlength={2000} aria-describedby="selection-value-hint" />
            <small id="selection-value-hint" class="muted">
              Tags and authors: separated by commas. Reading direction: ltr or rtl. Empty clears the series, language or direction.
            </small>
          </div>
        )}
        <div class="actions">
          <button type="submit" class="primary" id="selection-apply">
            Apply
          </button>
          <button type="button" id="selection-clear" hidden>
            Clear the selection
          </button>
        </div>
      </div>
      <Outcome id="selection-outcome" />
    </form>
  );
}
