// Smart collections and auto-assign rules: conditions over 14 fields, checked here, compiled to SQL
// by the store. A rule is {match: 'all' | 'any', conditions: [{field, op, value}]}.
import { isUuid } from '@bindery/contracts';
export const TEXT_FIELDS = ['title', 'author', 'series', 'tags', 'language', 'publisher'] as const;
export const NUMBER_FIELDS = ['year', 'rating', 'progress'] as const;
export const DATE_FIELDS = ['added_date', 'last_read_date'] as const;
export const CHOICE_FIELDS = ['format', 'library', 'read_status'] as const;
export const FIELDS = [...TEXT_FIELDS, ...NUMBER_FIELDS, ...DATE_FIELDS, ...CHOICE_FIELDS] as const;
export type Field = (typeof FIELDS)[number];

export const OPS: Record<'text' | 'number' | 'date' | 'choice', readonly string[]> = {
  text: ['contains', 'not_contains', 'equals', 'not_equals', 'starts_with', 'is_empty', 'is_not_empty'],
  number: ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'],
  date: ['before', 'after', 'within_days', 'is_empty', 'is_not_empty'],
  choice: ['equals', 'not_equals'],
};
export const READ_STATUSES = ['unread', 'reading', 'finished'];

export const kindOf = (f: Field): keyof typeof OPS =>
  (TEXT_FIELDS as readonly string[]).includes(f)
    ? 'text'
    : (NUMBER_FIELDS as readonly string[]).includes(f)
      ? 'number'
      : (DATE_FIELDS as readonly string[]).includes(f)
        ? 'date'
        : 'choice';

export interface Condition {
  field: Field;
  op: string;
  value: string | number | null;
}
export interface Rules {
  match: 'all' | 'any';
  conditions: Condition[];
}

export function parseRules(raw: unknown): { ok: true; value: Rules } | { ok: false; message: string } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, message: 'rules must be an object with match and conditions' };
  const r = raw as Record<string, unknown>;
  const match = r.match ?? 'all';
  if (match !== 'all' && match !== 'any') return { ok: false, message: "rules.match must be 'all' or 'any'" };
  if (!Array.isArray(r.conditions) || r.conditions.length === 0 || r.conditions.length > 50) return { ok: false, message: 'rules.conditions must be a list of 1 to 50 conditions' };
  const out: Condition[] = [];
  for (const [i, c] of r.conditions.entries()) {
    const at = `rules.conditions[${i}]`;
    if (c === null || typeof c !== 'object') return { ok: false, message: `${at} must be an object` };
    const { field, op, value } = c as Record<string, unknown>;
    if (!(FIELDS as readonly unknown[]).includes(field)) return { ok: false, message: `${at}.field must be one of ${FIELDS.join(', ')}` };
    const kind = kindOf(field as Field);
    if (!OPS[kind].includes(op as string)) return { ok: false, message: `${at}.op must be one of ${OPS[kind].join(', ')} for ${field as string}` };
    const needsValue = op !== 'is_empty' && op !== 'is_not_empty';
    let v: string | number | null = null;
    if (needsValue) {
      if (kind === 'number' || op === 'within_days') {
        const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
        if (!Number.isFinite(n)) return { ok: false, message: `${at}.value must be a number` };
        v = field === 'progress' && n > 1 ? n / 100 : n;
      } else if (kind === 'date') {
        if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) return { ok: false, message: `${at}.value must be a date` };
        v = new Date(value).toISOString();
      } else {
        if (typeof value !== 'string' || value.trim() === '' || value.length > 500) return { ok: false, message: `${at}.value must be text` };
        if (field === 'library' && !isUuid(value)) return { ok: false, message: `${at}.value must be a library id` };
        if (field === 'read_status' && !READ_STATUSES.includes(value)) return { ok: false, message: `${at}.value must be one of ${READ_STATUSES.join(', ')}` };
        v = field === 'library' ? value.toLowerCase() : value;
      }
    }
    out.push({ field: field as Field, op: op as string, value: v });
  }
  return { ok: true, value: { match, conditions: out } };
}
