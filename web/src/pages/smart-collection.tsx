// The smart collection builder: rows of field, operator and value, match all or any, a live preview
// (the reading service's preview of the rules: how many books and the first of them) and create.
// The choices are the ones the reading service's rules accept (its domain/rules.ts checks every rule
// again; a rule it refuses shows its own message in the preview).
import type { Form } from '../actions';
import { type MessageKey, useI18n } from '../i18n';
import { Cover, type Item } from './books';
import { named, STATES } from './library';

export const FIELDS: { value: string; label: MessageKey; kind: Kind }[] = [
  { value: 'title', label: 'library.sort.title', kind: 'text' },
  { value: 'author', label: 'library.author', kind: 'text' },
  { value: 'series', label: 'browse.series', kind: 'text' },
  { value: 'tags', label: 'book.tags', kind: 'text' },
  { value: 'language', label: 'book.language', kind: 'text' },
  { value: 'publisher', label: 'book.publisher', kind: 'text' },
  { value: 'year', label: 'book.year', kind: 'number' },
  { value: 'rating', label: 'smart.field.rating', kind: 'number' },
  { value: 'progress', label: 'smart.field.progress', kind: 'number' },
  { value: 'added_date', label: 'smart.field.added', kind: 'date' },
  { value: 'last_read_date', label: 'smart.field.lastRead', kind: 'date' },
  { value: 'format', label: 'library.format', kind: 'choice' },
  { value: 'read_status', label: 'browse.readState', kind: 'choice' },
  { value: 'library', label: 'browse.library', kind: 'choice' },
];
type Kind = 'text' | 'number' | 'date' | 'choice';

const OP_LABELS: Record<string, MessageKey> = {
  contains: 'smart.op.contains',
  not_contains: 'smart.op.notContains',
  equals: 'smart.op.equals',
  not_equals: 'smart.op.notEquals',
  starts_with: 'smart.op.startsWith',
  is_empty: 'smart.op.isEmpty',
  is_not_empty: 'smart.op.isNotEmpty',
  gt: 'smart.op.gt',
  gte: 'smart.op.gte',
  lt: 'smart.op.lt',
  lte: 'smart.op.lte',
  before: 'smart.op.before',
  after: 'smart.op.after',
  within_days: 'smart.op.withinDays',
};
export const OPS: Record<Kind, string[]> = {
  text: ['contains', 'not_contains', 'equals', 'not_equals', 'starts_with', 'is_empty', 'is_not_empty'],
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'],
  date: ['before', 'after', 'within_days', 'is_empty', 'is_not_empty'],
  choice: ['equals', 'not_equals'],
};
const FORMAT_CHOICES = ['epub', 'kepub', 'pdf', 'cbz', 'cbr', 'mobi', 'azw3', 'fb2'].map((f) => ({ value: f, label: f.toUpperCase() }));

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
  const { t } = useI18n();
  const id = `value-${r.key}`;
  if (r.op === 'is_empty' || r.op === 'is_not_empty') return null;
  const kind = kindOf(r.field);
  const label = (
    <label for={id} class="lib-hidden-label">
      {t('smart.value')}
    </label>
  );
  const choices =
    r.field === 'library' ? libraries.map((l) => ({ value: l.id, label: l.name })) : r.field === 'format' ? FORMAT_CHOICES : r.field === 'read_status' ? named(t, STATES) : [];
  if (kind === 'choice')
    return (
      <>
        {label}
        <select id={id} name={id}>
          {choices.map((c) => (
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
  const { t } = useI18n();
  const redraw = { 'hx-get': `/collections/rule-row?key=${r.key}`, 'hx-include': `#rule-${r.key}`, 'hx-target': `#rule-${r.key}`, 'hx-swap': 'outerHTML', 'hx-trigger': 'change' };
  return (
    <fieldset id={`rule-${r.key}`} class="rule-row" data-rule={r.key} data-field={r.field} data-op={r.op}>
      <legend class="lib-hidden-label">{t('smart.condition')}</legend>
      <label for={`field-${r.key}`} class="lib-hidden-label">
        {t('smart.field')}
      </label>
      <select id={`field-${r.key}`} name={`field-${r.key}`} {...redraw}>
        {FIELDS.map((f) => (
          <option key={f.value} value={f.value} selected={r.field === f.value}>
            {t(f.label)}
          </option>
        ))}
      </select>
      <label for={`op-${r.key}`} class="lib-hidden-label">
        {t('smart.operator')}
      </label>
      <select id={`op-${r.key}`} name={`op-${r.key}`} {...redraw}>
        {OPS[kindOf(r.field)].map((o) => (
          <option key={o} value={o} selected={r.op === o}>
            {t(OP_LABELS[o] ?? 'smart.op.equals')}
          </option>
        ))}
      </select>
      <ValueInput r={r} libraries={libraries} />
      <button type="button" hx-get="/collections/rule-removed" hx-target={`#rule-${r.key}`} hx-swap="outerHTML" id={`remove-rule-${r.key}`} aria-label={t('smart.removeCondition')}>
        {t('coll.remove')}
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
  const { t } = useI18n();
  return (
    <section class="card" aria-labelledby="smart-title" id="rule-builder">
      <h2 id="smart-title">{t(editing ? 'smart.itsRules' : 'smart.new')}</h2>
      <p class="muted">{t(editing ? 'smart.editHelp' : 'smart.newHelp')}</p>
      <form
        id="smart-form"
        hx-post={editing ? `/collections/${editing.id}/rules` : '/collections/smart'}
        hx-target="#smart-outcome"
        class="smart-form"
        aria-describedby="smart-help"
      >
        <p id="smart-help" class="muted">
          {t('smart.help')}
        </p>
        <div class="inline-form">
          <label for="smart-name">{t('browse.name')}</label>
          <input id="smart-name" name="name" maxlength={100} required class="grow" value={editing?.name} />
        </div>
        <div class="inline-form">
          <label for="smart-match">{t('smart.match')}</label>
          <select id="smart-match" name="match">
            <option value="all" selected={match === 'all'}>
              {t('smart.matchAll')}
            </option>
            <option value="any" selected={match === 'any'}>
              {t('smart.matchAny')}
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
            {t('smart.addCondition')}
          </button>
          <button type="submit" class="primary" id={editing ? 'save-rules' : 'create-smart'}>
            {t(editing ? 'smart.saveRules' : 'smart.create')}
          </button>
        </div>
        <div id="smart-outcome" class="outcome" aria-live="polite" />
      </form>
      <div id="smart-preview" aria-live="polite">
        <p class="muted">{t('smart.typeValue')}</p>
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
  const { t } = useI18n();
  if (error)
    return (
      <p id="preview-error" class="alert alert-error">
        {error}
      </p>
    );
  return (
    <>
      <p id="preview-count">{t('smart.matches', { count: total })}</p>
      {books.length > 0 && (
        <ul class="grid preview-grid" aria-label={t('smart.matchingBooks')}>
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
