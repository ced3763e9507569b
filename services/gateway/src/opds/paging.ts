// `page` and `per_page` of every OPDS feed: 1-based pages, 50 entries by default, 200 at most
// (a reader app asks for one screenful; no feed ever reads a whole library).
import { err, fail, ok, type Result } from '@bindery/contracts';

export const PER_PAGE_DEFAULT = 50;
export const PER_PAGE_MAX = 200;
/** far past any real catalog; keeps offsets inside what the database takes */
const PAGE_MAX = 1_000_000;

export const PAGE_MESSAGE = 'page must be a whole number from 1';
export const PER_PAGE_MESSAGE = `per_page must be a whole number from 1 to ${PER_PAGE_MAX}`;

export interface Paging {
  page: number;
  perPage: number;
  offset: number;
}

const one = (v: unknown): string | undefined => (Array.isArray(v) ? v[0] : typeof v === 'string' ? v : undefined);

export function parsePaging(q: Record<string, unknown>): Result<Paging> {
  const p = one(q.page);
  const n = one(q.per_page);
  const page = p === undefined || p === '' ? 1 : /^\d{1,7}$/.test(p) ? Number(p) : NaN;
  if (!(page >= 1 && page <= PAGE_MAX)) return err(fail('validation', PAGE_MESSAGE));
  const perPage = n === undefined || n === '' ? PER_PAGE_DEFAULT : /^\d{1,4}$/.test(n) ? Number(n) : NaN;
  if (!(perPage >= 1 && perPage <= PER_PAGE_MAX)) return err(fail('validation', PER_PAGE_MESSAGE));
  return ok({ page, perPage, offset: (page - 1) * perPage });
}

export const lastPage = (total: number, perPage: number) => Math.max(1, Math.ceil(total / perPage));
