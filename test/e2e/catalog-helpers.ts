// Shared pieces of the catalog end-to-end tests: a private copy of the generated corpus, its
// manifest, libraries, and waiting for scans to settle.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { ROOT } from '../support/bindery';
import type { Call } from './helpers';

/** Made by ../shared/peers/make-corpus.sh 40 (SEED=1): real EPUB, CBZ, MOBI and AZW3 files. */
export const FIXTURE = join(ROOT, 'test/fixtures/corpus40');
export const SAMPLES = join(ROOT, '../shared/peers/samples/books');

export interface ManifestRow {
  path: string;
  kind: 'book' | 'duplicate' | 'corrupt' | 'junk';
  format: string;
  title: string;
  authors: string[];
  series: string;
  language: string;
  isbn: string;
  year: string;
  bytes: number;
  sha256: string;
  dup_of: string;
  note: string;
}

export function manifest(dir = FIXTURE): ManifestRow[] {
  const [head, ...lines] = readFileSync(join(dir, 'manifest.tsv'), 'utf8').trimEnd().split('\n');
  const cols = head!.split('\t');
  return lines.map((l) => {
    const v = l.split('\t');
    const o = Object.fromEntries(cols.map((c, i) => [c, v[i] ?? '']));
    return { ...o, authors: o.authors ? o.authors.split(' & ') : [], bytes: Number(o.bytes) } as unknown as ManifestRow;
  });
}

// Folders made for a file's tests, removed when the file ends: one hook registered at import, since a
// hook registered inside a running test is never run (and the folder would stay behind).
// Only under vitest: the benchmarks (plain tsx scripts) use these helpers too and clean up themselves.
const made: string[] = [];
if (process.env.VITEST)
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

/** A private copy of a folder, removed when the test file ends. */
export function copyOf(src: string): string {
  const dir = emptyDir();
  cpSync(src, dir, { recursive: true, preserveTimestamps: true });
  return dir;
}

/** An empty folder, removed when the test file ends. */
export function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-lib-'));
  made.push(dir);
  return dir;
}

export async function createLibrary(call: Call, token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await call('POST', '/api/libraries', { token, body });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** Waits until the library has no queued or running scan and `scanId` (or any scan) has finished; returns that scan. */
export async function settled(call: Call, token: string, libraryId: string, scanId?: string, timeoutMs = 60_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  const finished = (s: Record<string, any>) => s.status === 'completed' || s.status === 'failed';
  for (;;) {
    const r = await call('GET', '/api/scanner/status', { token });
    expect(r.status, r.text).toBe(200);
    const mine = (r.json.scans as Record<string, any>[]).filter((s) => s.library_id === libraryId);
    const busy = mine.some((s) => !finished(s));
    const done = mine.find((s) => finished(s) && (!scanId || s.id === scanId));
    if (!busy && done) return done;
    if (Date.now() > until) throw new Error(`scan of ${libraryId} did not settle: ${JSON.stringify(mine.slice(0, 3))}`);
    await new Promise((res) => setTimeout(res, 150));
  }
}

/** Starts a scan and waits for it; returns the finished scan. */
export async function scan(call: Call, token: string, libraryId: string, full = false): Promise<Record<string, any>> {
  const r = await call('POST', '/api/scanner/scan', { token, body: { library_id: libraryId, ...(full ? { full: true } : {}) } });
  expect(r.status, r.text).toBe(202);
  return settled(call, token, libraryId, r.json.scans[0].id);
}

export async function items(call: Call, token: string, libraryId: string): Promise<Record<string, any>[]> {
  const r = await call('GET', `/api/media-items?library_id=${libraryId}&limit=1000`, { token });
  expect(r.status, r.text).toBe(200);
  return r.json.data;
}

export const byPath = (list: Record<string, any>[], path: string): any => list.find((i) => i.formats.some((f: { file_path: string }) => f.file_path === path));

export const uploadUrl = (libraryId: string, rel: string) => `/uploads/library-${libraryId}/${rel.split('/').map(encodeURIComponent).join('/')}`;
