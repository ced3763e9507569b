// The embedded data directory (issue 18, item 11): the database under DATA_DIR/db holds password
// hashes and notes, so DATA_DIR is 0700 and nothing under it has a group or other permission bit,
// whether the server created it or found it with looser modes. Embedded mode only: distributed
// services keep no database in DATA_DIR.
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startBindery, type Bindery } from '../support/bindery';
import { api, register } from './helpers';

const mode = (p: string) => lstatSync(p).mode & 0o777;

/** Every file and folder under `dir` (symlinks left out) that group or others may use, with its mode. */
function loose(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isSymbolicLink())
    .map((e) => join(e.parentPath, e.name))
    .filter((p) => (mode(p) & 0o077) !== 0)
    .map((p) => `${p.slice(dir.length)} ${mode(p).toString(8)}`);
}

describe('data directory permissions (embedded)', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });
  const start = async (dataDir: string): Promise<Bindery> => {
    const b = await startBindery('embedded', { DATA_DIR: dataDir });
    cleanup.push(() => b.stop());
    return b;
  };

  it('creates DATA_DIR 0700, and what the server writes under it is its user’s alone', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'bindery-datadir-'));
    cleanup.push(() => rmSync(parent, { recursive: true, force: true }));
    const dataDir = join(parent, 'data');
    const b = await start(dataDir);
    const call = api(b);
    await register(call);
    const u = await register(call);
    const r = await call('PUT', '/api/auth/profile', { token: u.token, body: { first_name: 'Private', theme: 'dark' } });
    expect(r.status, r.text).toBe(200);
    expect(mode(dataDir)).toBe(0o700);
    expect(existsSync(join(dataDir, 'db'))).toBe(true);
    expect(readdirSync(join(dataDir, 'db'), { recursive: true }).length).toBeGreaterThan(100);
    expect(loose(dataDir)).toEqual([]);
    // what the database writes on its way down (its statistics, say) too
    expect(await b.procs[0]!.stop()).toBe(0);
    expect(loose(dataDir)).toEqual([]);
  }, 240_000);

  it('tightens an existing DATA_DIR with 0755 folders and 0644 files at start, leaving what a symlink points to alone', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'bindery-datadir-'));
    cleanup.push(() => rmSync(parent, { recursive: true, force: true }));
    const dataDir = join(parent, 'data');
    const template = process.env.BINDERY_TEST_EMBEDDED_TEMPLATE;
    if (template && existsSync(template)) cpSync(template, dataDir, { recursive: true });
    mkdirSync(join(dataDir, 'old', 'deeper'), { recursive: true });
    writeFileSync(join(dataDir, 'old', 'deeper', 'notes.txt'), 'left by an earlier version\n');
    const outside = join(parent, 'outside.txt');
    writeFileSync(outside, 'not the data directory\n');
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dataDir, 'old', 'link.txt'));
    for (const e of readdirSync(dataDir, { recursive: true, withFileTypes: true })) {
      if (!e.isSymbolicLink()) chmodSync(join(e.parentPath, e.name), e.isDirectory() ? 0o755 : 0o644);
    }
    chmodSync(dataDir, 0o755);
    expect(loose(dataDir).length).toBeGreaterThan(3);

    const b = await start(dataDir);
    await register(api(b));
    expect(mode(dataDir)).toBe(0o700);
    expect(loose(dataDir)).toEqual([]);
    expect(mode(join(dataDir, 'old'))).toBe(0o700);
    expect(mode(join(dataDir, 'old', 'deeper', 'notes.txt'))).toBe(0o600);
    expect(statSync(outside).mode & 0o777).toBe(0o644);
  }, 240_000);
});
