// privateDataDir: a start's walk of the whole data directory (in a thread of its own:
// privateDataDirApart) tightens every entry; the other walks take the directory's own entries and
// one subfolder (PGlite's), leaving a library's covers alone.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { privateDataDir, privateDataDirApart } from '../src/private-tree';

const mode = (p: string) => lstatSync(p).mode & 0o777;
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A data directory whose every entry is 0755 (folders) or 0644 (files), and a 0644 file outside it that a symlink inside points to. */
function loosened(): { dir: string; outside: string } {
  const parent = mkdtempSync(join(tmpdir(), 'bindery-private-'));
  made.push(parent);
  const dir = join(parent, 'data');
  for (const d of ['db/base/1', 'covers/ab', 'old']) mkdirSync(join(dir, d), { recursive: true });
  for (const f of ['jwt-secret', 'db/PG_VERSION', 'db/base/1/1259', 'covers/ab/1.jpg', 'old/notes.txt']) writeFileSync(join(dir, f), 'x');
  const outside = join(parent, 'outside.txt');
  writeFileSync(outside, 'not the data directory');
  symlinkSync(outside, join(dir, 'db', 'link'));
  for (const p of ['', 'db', 'db/base', 'db/base/1', 'covers', 'covers/ab', 'old']) chmodSync(join(dir, p), 0o755);
  for (const p of ['jwt-secret', 'db/PG_VERSION', 'db/base/1/1259', 'covers/ab/1.jpg', 'old/notes.txt']) chmodSync(join(dir, p), 0o644);
  chmodSync(outside, 0o644);
  return { dir, outside };
}

describe('privateDataDir', () => {
  it('tightens every folder and file under the data directory and leaves what a symlink points to', () => {
    const { dir, outside } = loosened();
    const kept = privateDataDir(dir);
    expect(kept).toEqual({ tightened: 12, failed: [] });
    expect([dir, join(dir, 'db/base/1'), join(dir, 'covers/ab'), join(dir, 'old')].map(mode)).toEqual([0o700, 0o700, 0o700, 0o700]);
    expect([join(dir, 'jwt-secret'), join(dir, 'db/base/1/1259'), join(dir, 'covers/ab/1.jpg'), join(dir, 'old/notes.txt')].map(mode)).toEqual([0o600, 0o600, 0o600, 0o600]);
    expect(mode(outside)).toBe(0o644);
    expect(privateDataDir(dir)).toEqual({ tightened: 0, failed: [] });
  });

  it('in a thread of its own, tightens the whole tree as the walk here does', async () => {
    const { dir, outside } = loosened();
    expect(await privateDataDirApart(dir)).toEqual({ tightened: 12, failed: [], thread: true });
    expect([dir, join(dir, 'db/base/1'), join(dir, 'covers/ab'), join(dir, 'old')].map(mode)).toEqual([0o700, 0o700, 0o700, 0o700]);
    expect([join(dir, 'jwt-secret'), join(dir, 'db/base/1/1259'), join(dir, 'covers/ab/1.jpg'), join(dir, 'old/notes.txt')].map(mode)).toEqual([0o600, 0o600, 0o600, 0o600]);
    expect(mode(outside)).toBe(0o644);
    expect(await privateDataDirApart(dir)).toEqual({ tightened: 0, failed: [], thread: true });
  });

  it('with a subfolder named, walks the directory, its own entries and that subfolder only', () => {
    const { dir, outside } = loosened();
    const kept = privateDataDir(dir, 'db');
    // the directory, jwt-secret, db, covers, old (its own entries); db/PG_VERSION, db/base, db/base/1, db/base/1/1259
    expect(kept).toEqual({ tightened: 9, failed: [] });
    expect([dir, join(dir, 'jwt-secret'), join(dir, 'covers'), join(dir, 'db/base/1'), join(dir, 'db/base/1/1259')].map(mode)).toEqual([0o700, 0o600, 0o700, 0o700, 0o600]);
    // below the other folders nothing was walked
    expect([join(dir, 'covers/ab'), join(dir, 'covers/ab/1.jpg'), join(dir, 'old/notes.txt')].map(mode)).toEqual([0o755, 0o644, 0o644]);
    expect(mode(outside)).toBe(0o644);
  });

  it('with a subfolder that is absent or a symlink, walks only the directory’s own entries', () => {
    const { dir, outside } = loosened();
    expect(privateDataDir(dir, 'missing').tightened).toBe(5);
    const other = loosened();
    rmSync(join(other.dir, 'db'), { recursive: true });
    symlinkSync(join(other.dir, 'old'), join(other.dir, 'db'));
    // the directory, jwt-secret, covers, old; the db symlink and what it points into are left
    expect(privateDataDir(other.dir, 'db')).toEqual({ tightened: 4, failed: [] });
    expect(mode(join(other.dir, 'old/notes.txt'))).toBe(0o644);
    expect(mode(outside)).toBe(0o644);
  });
});
