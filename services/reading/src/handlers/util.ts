// Small pieces every reading handler uses: id checks, record shapes, failures.
import { randomUUID } from 'node:crypto';
import { err, fail, Reading, type Failure, type Result } from '@bindery/contracts';

export const M = Reading.ReadingMessages;
/** An operation's request, as its schema (contracts' ReadingOperations) states it and the service checked it. */
export type Req<K extends Reading.ReadingOp> = Reading.ReadingRequest<K>;
/** What an operation's handler answers: its result, or a failure. */
export type Answer<K extends Reading.ReadingOp> = Promise<Result<Reading.ReadingResult<K>>>;
export type Access = Reading.Access;
/** A query string as the gateway passes it on. */
export type Query = Req<'conflicts-list'>['query'];

export { isUuid } from '@bindery/contracts';
export const newId = () => randomUUID();

export const bad = (message: string): Failure => fail('validation', message);
export const notFound = (message: string): Failure => fail('not_found', message);
export const conflict = (message: string): Failure => fail('conflict', message);
export const no = <T = never>(f: Failure): Result<T> => err(f);

export const iso = (v: unknown): string | null => (v === null || v === undefined ? null : (v instanceof Date ? v : new Date(String(v))).toISOString());

/** A short text field: undefined when absent, null when of the wrong type or too long. */
export function text(input: Record<string, unknown>, key: string, max: number): string | undefined | null {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) return null;
  return v;
}

export const q1 = (q: Query, k: string): string | undefined => {
  const v = q?.[k];
  return Array.isArray(v) ? v[0] : v;
};

/** The SQL condition "the item is in a library the caller may see" (and not removed). */
export function visibleLibraries(access: Access | undefined): { all: boolean; ids: string[] } {
  if (!access || access.all) return { all: true, ids: [] };
  return { all: false, ids: access.ids };
}
