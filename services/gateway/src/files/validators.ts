// Validators and the conditional-request rules of RFC 9110 §13 for files served from disk.
import type { BigIntStats } from 'node:fs';

/**
 * A strong ETag from inode, size and nanosecond mtime, the same heuristic nginx and Apache use:
 * a rewrite changes at least one of them. Strong, so If-Range can match it.
 */
export const etagOf = (st: BigIntStats): string => `"${st.ino.toString(36)}-${st.size.toString(36)}-${st.mtimeNs.toString(36)}"`;

/** Whole seconds: HTTP dates have no finer resolution, so comparisons happen in seconds too. */
export const mtimeSecondsOf = (st: BigIntStats): number => Number(st.mtimeMs / 1000n);

export const httpDate = (seconds: number): string => new Date(seconds * 1000).toUTCString();

const opaque = (tag: string): string => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** If-None-Match: `*`, or any listed tag equal to ours under weak comparison. */
export function noneMatchHits(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((t) => opaque(t) === opaque(etag));
}

/** Whether a GET or HEAD may be answered 304. If-Modified-Since counts only without If-None-Match. */
export function notModified(headers: { 'if-none-match'?: string; 'if-modified-since'?: string }, etag: string, mtimeSeconds: number): boolean {
  const inm = headers['if-none-match'];
  if (inm !== undefined) return noneMatchHits(inm, etag);
  const ims = headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && mtimeSeconds <= Math.floor(since / 1000);
}

/** If-Range: the Range applies only while the file is what the client already holds part of. */
export function ifRangeHolds(header: string | undefined, etag: string, mtimeSeconds: number): boolean {
  if (header === undefined) return true;
  const v = header.trim();
  if (v.startsWith('"') || v.startsWith('W/')) return v === etag; // strong comparison: a weak tag never matches
  const date = Date.parse(v);
  return !Number.isNaN(date) && Math.floor(date / 1000) === mtimeSeconds;
}
