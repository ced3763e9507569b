// The smart collection builder: rows of field, operator and value, match all or any, a live preview
// (the reading service's preview of the rules: how many books and the first of them) and create.
// The choices are the ones the reading service's rules accept (its domain/rules.ts checks every rule
// again; a rule it refuses shows its own message in the preview).
import type { Form } from '../actions';
import { Cover, type Item } from './books';

export const FIELDS: { value: string; label: string; kind: Kind }[] = [
  { value: 'title', label: 'Title', kind: 'text' },
  { value: 'author', label: 'Author', kind: 'text' },
  { value: 'series', label: 'Series', kind: 'text' },
  { value: 'tags', label: 'Tags', kind: 'text' },
  { value: 'language', label: 'Language', kind: 'text' },
  { value: 'publisher', label: 'Publisher', kind: 'text' },
  { value: 'year', label: 'Year', kind: 'number' },
  { value: 'rating', label: 'Rating', kind: 'number' },
  { value: 'progress', label: 'Progress (%)', kind: 'number' },
  { value: 'added_date', label: 'Date added', kind: 'date' },
  { value: 'last_read_date', label: 'Last read', kind: 'date' },
  { value: 'format', label: 'Format', kind: 'choice' },
  { value: 'read_status', label: 'Read state', kind: 'choice' },
  { value: 'library', label: 'Library', kind: 'choice' },
];
type Kind = 'text' | 'number' | 'date' | 'choice';

const OP_LABELS: Record<string, string> = {
  contains: 'contains',
  not_contains: 'does not contain',
  equals: 'is',
  not_equals: 'is not',
  starts_with: 'starts with',
  is_empty: 'is empty',
  is_not_empty: 'is not empty',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  before: 'is before',
  after: 'is after',
  within_days: 'is within the last days',
};
export const OPS: Record<Kind, string[]> = {
  text: ['contains', 'not_contains', 'equals', 'not_equals', 'starts_with', 'is_empty', 'is_not_empty'],
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'],
  date: ['before', 'after', 'within_days', 'is_empty', 'is_not_empty'],
  choice: ['equals', 'not_equals'],
};
const CHOICES: Record<string, { value: string; label: string }[]> = {
  format: ['epub', 'kepub', 'pdf', 'cbz', 'cbr', 'mobi', 'azw3', 'fb2'].map((f) => ({ value: f, label: f.toUpperCase() })),
  read_status: [
    { value: 'unread', label: 'Unread' },
    { value: 'reading', label: 'In progress' },
    { value: 'finished', label: 'Finished' },
  ],
};

export interface RuleRowData {
  key: string;
  field: string;
  op: string;
  value: string;
}

const kindOf = (field: string): Kind => FIELDS.find((f) => f.value === field)?.kind ?? 'text';

/** A row as the form gives it (an unknown field is the first; an operator of another kind, the field's first). */
export function rowOf(key: string, field: unknown, op: unknown, value: unknown): RuleRowData {
  const f = FIELDS.some((x) => x.value === field) ? (field as string) : 'title';
  const ops = OPS[kindOf(f)];
  return { key, field: f, op: ops.includes(op as string) ? (op as string) : ops[0]!, value: typeof value === 'string' ? value.slice(0, 500) : '' };
}

/** The rows of the builder's form, in the form's order (fields are `field-<key>`, `op-<key>`, `value-<key>`). */
export function rowsOf(form: Form): RuleRowData[] {
  const one = (k: string) => {
    const v = form[k];
    return Array.isArray(v) ? v[0] : v;
  };
  return Object.keys(form)
    .map((k) => /^field-([a-z0-9]{1,20})$/.exec(k)?.[1])
    .filter((k): k is string => k !== undefined)
    .slice(0, 50)
    .map((k) => rowOf(k, one(`field-${k}`), one(`op-${k}`), one(`value-${k}`)));
}

const noValue = (op: string) => op === 'is_empty' || op === 'is_not_empty';

/** The rules the API takes for the match and the complete rows (a row still waiting for its value is left out). */
export function rulesOf(form: Form): { match: 'all' | 'any'; conditions: { field: string; op: string; value: string | null }[] } {
  const match = form.match === 'any' ? 'any' : 'all';
  return {
    match,
    conditions: rowsOf(form)
      .filter((r) => noValue(r.op) || r.value.trim() !== '')
      .map((r) => ({ field: r.field, op: r.op, value: noValue(r.op) ? null : r.value })),
  };
}

/** A fresh row key (the builder's rows are told apart by it; no meaning of its own). */
export const newKey = () => Math.random().toString(36).slice(2, 10);

/** A library the caller may see, for the `library` field's choices. */
export interface LibraryChoice {
  id: string;
  name: string;
}

function ValueInput({ r, libraries }: { r: RuleRowData; libraries: LibraryChoice[] }) {
  const id = `value-${r.key}`;
  if (r.op === 'is_empty' || r.op === 'is_not_empty') return null;
  const kind = kindOf(r.field);
  const label = (
    <label for={id} class="lib-hidden-label">
      Value
    </label>
  );
  if (kind === 'choice')
    return (
      <>
        {label}
        <select id={id} name={id}>
          {(r.field === 'library' ? libraries.map((l) => ({ value: l.id, label: l.name })) : (CHOICES[r.field] ?? [])).map((c) => (
            <option key={c.value} value={c.value} selected={r.value === c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </>
    );
  const type = kind === 'number' || r.op === 'within_days' ? 'number' : kind === 'date' ? 'date' : 'text';
  return (
    <>
      {label}
      <input id={id} name={id} type={type} value={r.value} maxlength={500} class="grow" />
    </>
  );
}

/** One condition: changing its field or operator redraws the row with that field's operators and value input. */
export function RuleRow({ r, libraries = [] }: { r: RuleRowData; libraries?: LibraryChoice[] }) {
  const redraw = { 'hx-get': `/collections/rule-row?key=${r.key}`, 'hx-include': `#rule-${r.key}`, 'hx-target': `#rule-${r.key}`, 'hx-swap': 'outerHTML', 'hx-trigger': 'change' };
  return (
    <fieldset id={`rule-${r.key}`} class="rule-row" data-rule={r.key} data-field={r.field} data-op={r.op}>
      <legend class="lib-hidden-label">Condition</legend>
      <label for={`field-${r.key}`} class="lib-hidden-label">
        Field
      </label>
      <select id={`field-${r.key}`} name={`field-${r.key}`} {...redraw}>
        {FIELDS.map((f) => (
          <option key={f.value} value={f.value} selected={r.field === f.value}>
            {f.label}
          </option>
        ))}
      </select>
      <label for={`op-${r.key}`} class="lib-hidden-label">
        Operator
      </label>
      <select id={`op-${r.key}`} name={`op-${r.key}`} {...redraw}>
        {OPS[kindOf(r.field)].map((o) => (
          <option key={o} value={o} selected={r.op === o}>
            {OP_LABELS[o]}
          </option>
        ))}
      </select>
      <ValueInput r={r} libraries={libraries} />
      <button type="button" hx-get="/collections/rule-removed" hx-target={`#rule-${r.key}`} hx-swap="outerHTML" id={`remove-rule-${r.key}`} aria-label="Remove this condition">
        Remove
      </button>
    </fieldset>
  );
}

/** Saved rules, as the API answers them. */
export interface SavedRules {
  match?: string;
  conditions?: { field?: unknown; op?: unknown; value?: unknown }[];
}

/** The rows of saved rules (a value shown as text; a row with no value, for "is empty", shows none). */
export const rowsOfRules = (rules: SavedRules | null | undefined): RuleRowData[] =>
  (rules?.conditions ?? []).map((c) => rowOf(newKey(), c.field, c.op, c.value === null || c.value === undefined ? '' : String(c.value)));

/**
 * The builder: name, match, rows, add a row, the live preview, and create — or, given a smart
 * collection (`editing`), its name and rules filled in, saved in place of the old ones.
 */
export function RuleBuilder({ editing, libraries = [] }: { editing?: { id: string; name: string; rules: SavedRules | null }; libraries?: LibraryChoice[] } = {}) {
  const saved = editing ? rowsOfRules(editing.rules) : [];
  const rows = saved.length > 0 ? saved : [rowOf(newKey(), 'title', 'contains', '')];
  const match = editing?.rules?.match === 'any' ? 'any' : 'all';
  return (
    <section class="card" aria-labelledby="smart-title" id="rule-builder">
      <h2 id="smart-title">{editing ? 'Its rules' : 'A new smart collection'}</h2>
      <p class="muted">{editing ? 'Change the conditions and save: the books follow the new rules at once.' : 'Its books are the ones matching the conditions, now and later.'}</p>
      <form
        id="smart-form"
        hx-post={editing ? `/collections/${editing.id}/rules` : '/collections/smart'}
        hx-target="#smart-outcome"
        class="smart-form"
        aria-describedby="smart-help"
      >
        <p id="smart-help" class="muted">
          Each change shows how many books match below.
        </p>
        <div class="inline-form">
          <label for="smart-name">Name</label>
          <input id="smart-name" name="name" maxlength={100} required class="grow" value={editing?.name} />
        </div>
        <div class="inline-form">
          <label for="smart-match">Books that match</label>
          <select id="smart-match" name="match">
            <option value="all" selected={match === 'all'}>
              all of the conditions
            </option>
            <option value="any" selected={match === 'any'}>
              any of the conditions
            </option>
          </select>
        </div>
        <div
          id="rule-rows"
          hx-post="/collections/preview"
          hx-include="#smart-form"
          hx-target="#smart-preview"
          hx-trigger={`${editing ? 'load, ' : ''}change delay:300ms from:#smart-form, input delay:500ms from:#smart-form, rules-changed from:body delay:100ms`}
        >
          {rows.map((r) => (
            <RuleRow key={r.key} r={r} libraries={libraries} />
          ))}
        </div>
        <div class="actions">
          <button type="button" id="add-rule" hx-get="/collections/rule-row" hx-target="#rule-rows" hx-swap="beforeend">
            Add a condition
          </button>
          <button type="submit" class="primary" id={editing ? 'save-rules' : 'create-smart'}>
            {editing ? 'Save rules' : 'Create smart collection'}
          </button>
        </div>
        <div id="smart-outcome" class="outcome" aria-live="polite" />
      </form>
      <div id="smart-preview" aria-live="polite">
        <p class="muted">Type a value to see the matching books.</p>
      </div>
    </section>
  );
}

export interface PreviewBook {
  media_item_id: string;
  item: Item;
}

/** What the rules match: how many books, and the first few. */
export function Preview({ total, books, error }: { total: number; books: PreviewBook[]; error?: string }) {
  if (error)
    return (
      <p id="preview-error" class="alert alert-error">
        {error}
      </p>
    );
  return (
    <>
      <p id="preview-count">{total === 1 ? '1 book matches.' : `${total} books match.`}</p>
      {books.length > 0 && (
        <ul class="grid preview-grid" aria-label="Matching books">
          {books.map((b) => (
            <li class="book" key={b.media_item_id}>
              <Cover item={b.item} />
              <span class="book-title">{b.item.title}</span>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
