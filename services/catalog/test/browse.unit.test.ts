import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { browse, BrowseMessages, MAX_ENTRIES, type BrowseResult } from '../src/handlers/browse';
import { asUnprivileged } from '../../../platform/test/support/unprivileged';

let base: string;
let root: string;
let other: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'bindery-browse-')));
  await chmod(base, 0o755); // reachable for the unprivileged user in the unreadability tests
  root = path.join(base, 'root');
  other = path.join(base, 'other');
  for (const d of ['Alpha', 'beta', 'Gamma/deep', 'alpha 2', '.hidden', 'locked', 'many']) await mkdir(path.join(root, d), { recursive: true });
  await mkdir(path.join(base, 'outside', 'secret'), { recursive: true });
  await mkdir(path.join(base, 'root2', 'sibling'), { recursive: true });
  await mkdir(path.join(other, 'shelf'), { recursive: true });
  await writeFile(path.join(root, 'file.epub'), 'x');
  await symlink(path.join(root, 'Alpha'), path.join(root, 'link-in'));
  await symlink(path.join(base, 'outside'), path.join(root, 'link-out'));
  await symlink(path.join(root, 'file.epub'), path.join(root, 'link-file'));
  await symlink(path.join(root, 'nowhere'), path.join(root, 'broken'));
  await symlink(root, path.join(base, 'root-link'));
  await Promise.all(Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => mkdir(path.join(root, 'many', `d${i}`))));
});

afterAll(async () => {
  await chmod(path.join(root, 'locked'), 0o755).catch(() => undefined);
  await rm(base, { recursive: true, force: true });
});

const ok = (r: Awaited<ReturnType<typeof browse>>): BrowseResult => {
  if ('error' in r) throw new Error(`expected a listing, got ${r.error}`);
  return r;
};
const names = (r: Awaited<ReturnType<typeof browse>>) => ok(r).entries.map((e) => e.name);

describe('browse', () => {
  it('lists the roots themselves when no path is given, leaving out missing ones', async () => {
    const r = ok(await browse([root, path.join(base, 'missing'), `${other}/`], undefined));
    expect(r).toEqual({
      path: null,
      parent: null,
      truncated: false,
      entries: [
        { name: other, path: other, readable: true },
        { name: root, path: root, readable: true },
      ],
    });
    expect(ok(await browse([root], '')).path).toBeNull();
  });

  it('lists subfolders sorted case-insensitively, without files, dot-folders or links that lead out', async () => {
    const r = ok(await browse([root], root));
    expect(r.path).toBe(root);
    expect(r.parent).toBeNull();
    expect(r.truncated).toBe(false);
    expect(r.entries.map((e) => e.name)).toEqual(['Alpha', 'alpha 2', 'beta', 'Gamma', 'link-in', 'locked', 'many']);
    expect(r.entries[0]).toEqual({ name: 'Alpha', path: path.join(root, 'Alpha'), readable: true });
  });

  it('gives the parent below a root', async () => {
    const r = ok(await browse([root], path.join(root, 'Gamma', 'deep')));
    expect(r).toMatchObject({ path: path.join(root, 'Gamma', 'deep'), parent: path.join(root, 'Gamma'), entries: [] });
    expect(ok(await browse([root], path.join(root, 'Gamma'))).parent).toBe(root);
  });

  it('tidies slashes and dot segments before judging', async () => {
    expect(ok(await browse([root], `/${root}//Alpha/`)).path).toBe(path.join(root, 'Alpha'));
    expect(ok(await browse([root], `${root}/Alpha/..`)).path).toBe(root);
    expect(ok(await browse([`${root}/`], `${root}/./beta/.`)).path).toBe(path.join(root, 'beta'));
  });

  it('refuses paths outside the roots, however spelled', async () => {
    const outside = { error: BrowseMessages.outside };
    expect(await browse([root], base)).toEqual(outside);
    expect(await browse([root], '/')).toEqual(outside);
    expect(await browse([root], '/etc')).toEqual(outside);
    expect(await browse([root], `${root}/..`)).toEqual(outside);
    expect(await browse([root], `${root}/Alpha/../../outside`)).toEqual(outside);
    expect(await browse([root], `${root}/../root2/sibling`)).toEqual(outside);
    expect(await browse([root], path.join(base, 'root2'))).toEqual(outside); // a sibling sharing the name's prefix
    expect(await browse([root], `${root}/Alpha\0`)).toEqual(outside);
    // missing folders outside answer the same, so nothing out there can be probed
    expect(await browse([root], path.join(base, 'outside', 'nope'))).toEqual(outside);
  });

  it('refuses a symlink that leads out, and anything behind it', async () => {
    const outside = { error: BrowseMessages.outside };
    expect(await browse([root], path.join(root, 'link-out'))).toEqual(outside);
    expect(await browse([root], path.join(root, 'link-out', 'secret'))).toEqual(outside);
    expect(await browse([root], path.join(root, 'link-out', 'nope'))).toEqual(outside);
  });

  it('follows a symlink that stays inside, showing where it leads', async () => {
    const r = ok(await browse([root], path.join(root, 'link-in')));
    expect(r.path).toBe(path.join(root, 'Alpha'));
    expect(r.parent).toBe(root);
  });

  it('keeps the configured name of a root that is a symlink', async () => {
    const linked = path.join(base, 'root-link');
    const r = ok(await browse([linked], path.join(linked, 'Gamma')));
    expect(r).toMatchObject({ path: path.join(linked, 'Gamma'), parent: linked });
    expect(r.entries).toEqual([{ name: 'deep', path: path.join(linked, 'Gamma', 'deep'), readable: true }]);
    expect(ok(await browse([linked], linked)).parent).toBeNull();
  });

  it('lets the outermost of nested roots give the parent', async () => {
    expect(ok(await browse([root, base], root)).parent).toBe(base);
    expect(names(await browse([root, base], undefined))).toEqual([base]);
  });

  it('says what is wrong with a bad path', async () => {
    expect(await browse([root], 'root/Alpha')).toEqual({ error: BrowseMessages.notAbsolute });
    expect(await browse([root], path.join(root, 'nope'))).toEqual({ error: BrowseMessages.missing });
    expect(await browse([root], path.join(root, 'broken'))).toEqual({ error: BrowseMessages.missing });
    expect(await browse([root], path.join(root, 'file.epub'))).toEqual({ error: BrowseMessages.notDirectory });
    expect(await browse([root], path.join(root, 'link-file'))).toEqual({ error: BrowseMessages.notDirectory });
    expect(await browse([root], path.join(root, 'file.epub', 'x'))).toEqual({ error: BrowseMessages.missing });
  });

  it('caps a huge folder and says so', async () => {
    const r = ok(await browse([root], path.join(root, 'many')));
    expect(r.truncated).toBe(true);
    expect(r.entries).toHaveLength(MAX_ENTRIES);
    // numeric-aware order: d2 before d10
    expect(r.entries.slice(0, 3).map((e) => e.name)).toEqual(['d0', 'd1', 'd2']);
    expect(r.entries.at(-1)?.name).toBe(`d${MAX_ENTRIES - 1}`);
  });

  it('marks an unlistable subfolder and refuses to list it', async () => {
    const locked = path.join(root, 'locked');
    await chmod(locked, 0o000);
    try {
      const r = ok(await asUnprivileged(() => browse([root], root)));
      expect(r.entries.find((e) => e.name === 'locked')).toEqual({ name: 'locked', path: locked, readable: false });
      expect(r.entries.find((e) => e.name === 'Alpha')?.readable).toBe(true);
      expect(await asUnprivileged(() => browse([root], locked))).toEqual({ error: BrowseMessages.unreadable });
      expect(await asUnprivileged(() => browse([locked], undefined))).toEqual({
        path: null,
        parent: null,
        truncated: false,
        entries: [{ name: locked, path: locked, readable: false }],
      });
    } finally {
      await chmod(locked, 0o755);
    }
  });
});
