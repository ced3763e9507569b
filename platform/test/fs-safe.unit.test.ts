import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkFolder, isInside, relativeSegments, resolveInside } from '../src/fs-safe';
import { asUnprivileged } from './support/unprivileged';

let base: string;
let lib: string;
let lib2: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'bindery-fs-safe-')));
  lib = path.join(base, 'lib');
  lib2 = path.join(base, 'lib2');
  await mkdir(path.join(lib, 'sub'), { recursive: true });
  await mkdir(lib2);
  await writeFile(path.join(lib, 'book.epub'), 'book');
  await writeFile(path.join(lib, 'sub', 'inner.cbz'), 'inner');
  await writeFile(path.join(lib, 'Cafe\u0301 Cre\u0300me.epub'), 'nfd'); // NFD on disk, as macOS copies leave it
  await writeFile(path.join(lib, '%2e%2e'), 'a file really named %2e%2e');
  await writeFile(path.join(lib2, 'secret.epub'), 'secret');
  await writeFile(path.join(base, 'outside.txt'), 'outside');
  await symlink(path.join(lib, 'sub', 'inner.cbz'), path.join(lib, 'link-inside.cbz'));
  await symlink('sub', path.join(lib, 'dir-inside'));
  await symlink('/etc/passwd', path.join(lib, 'passwd.epub'));
  await symlink('/etc', path.join(lib, 'etc'));
  await symlink('../lib2', path.join(lib, 'sibling'));
  await symlink(lib, path.join(base, 'lib-link'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe('isInside', () => {
  it('is segment aware', () => {
    expect(isInside('/lib', '/lib')).toBe(true);
    expect(isInside('/lib', '/lib/a/b')).toBe(true);
    expect(isInside('/lib', '/lib2')).toBe(false);
    expect(isInside('/lib', '/lib2/a')).toBe(false);
    expect(isInside('/lib', '/li')).toBe(false);
    expect(isInside('/lib/', '/lib/a')).toBe(true);
    expect(isInside('/', '/anything/at/all')).toBe(true);
  });
});

describe('relativeSegments', () => {
  it.each([
    ['', 'empty'],
    ['..', 'parent'],
    ['../lib2/secret.epub', 'parent first'],
    ['sub/../book.epub', 'parent in the middle'],
    ['sub/..', 'parent last'],
    ['./book.epub', 'dot'],
    ['sub/./inner.cbz', 'dot in the middle'],
    ['sub//inner.cbz', 'double slash'],
    ['sub/', 'trailing slash'],
    ['/etc/passwd', 'absolute'],
    ['//server/share', 'UNC with slashes'],
    ['\\\\server\\share', 'UNC'],
    ['C:\\Windows\\win.ini', 'drive with backslash'],
    ['C:/Windows/win.ini', 'drive with slash'],
    ['sub\\inner.cbz', 'backslash'],
    ['book.epub\0.png', 'NUL'],
  ])('refuses %j (%s)', (p) => {
    expect(relativeSegments(p)).toBeNull();
  });
  it('accepts ordinary names, dots inside names and a colon that is no drive', () => {
    expect(relativeSegments('a/b c/d.epub')).toEqual(['a', 'b c', 'd.epub']);
    expect(relativeSegments('...epub')).toEqual(['...epub']);
    expect(relativeSegments('Re: Zero/v1.cbz')).toEqual(['Re: Zero', 'v1.cbz']);
  });
});

describe('resolveInside', () => {
  it('finds a file and returns its real path and the root it is under', async () => {
    expect(await resolveInside([lib], 'book.epub')).toEqual({ abs: path.join(lib, 'book.epub'), root: lib });
    expect(await resolveInside([lib], 'sub/inner.cbz')).toEqual({ abs: path.join(lib, 'sub', 'inner.cbz'), root: lib });
  });

  it('refuses traversal in every spelling that reaches it decoded', async () => {
    for (const p of [
      '../lib2/secret.epub',
      '../outside.txt',
      'sub/../../outside.txt',
      '..',
      '/etc/passwd',
      path.join(lib2, 'secret.epub'),
      'sub\\..\\..\\outside.txt',
      'book.epub\0',
      '',
    ]) {
      expect(await resolveInside([lib], p), p).toBeNull();
    }
  });

  it('does not decode again: %2e%2e is a file name, not a parent', async () => {
    expect(await resolveInside([lib], '%2e%2e')).toEqual({ abs: path.join(lib, '%2e%2e'), root: lib });
    expect(await resolveInside([lib], '%2e%2e/lib2/secret.epub')).toBeNull();
  });

  it('refuses symlinks that lead out of the root', async () => {
    expect(await resolveInside([lib], 'passwd.epub')).toBeNull();
    expect(await resolveInside([lib], 'etc/passwd')).toBeNull();
    expect(await resolveInside([lib], 'etc')).toBeNull();
    // a sibling whose name starts with the root's name is still outside
    expect(await resolveInside([lib], 'sibling/secret.epub')).toBeNull();
  });

  it('follows symlinks that stay inside the root', async () => {
    expect(await resolveInside([lib], 'link-inside.cbz')).toEqual({ abs: path.join(lib, 'sub', 'inner.cbz'), root: lib });
    expect(await resolveInside([lib], 'dir-inside/inner.cbz')).toEqual({ abs: path.join(lib, 'sub', 'inner.cbz'), root: lib });
  });

  it('accepts a root that is itself a symlink', async () => {
    const root = path.join(base, 'lib-link');
    expect(await resolveInside([root], 'book.epub')).toEqual({ abs: path.join(lib, 'book.epub'), root });
  });

  it('tries roots in order and skips missing ones', async () => {
    const missing = path.join(base, 'nope');
    expect(await resolveInside([missing, lib2, lib], 'book.epub')).toEqual({ abs: path.join(lib, 'book.epub'), root: lib });
    expect(await resolveInside([lib, lib2], 'secret.epub')).toEqual({ abs: path.join(lib2, 'secret.epub'), root: lib2 });
    expect(await resolveInside(['relative/root'], 'book.epub')).toBeNull();
    expect(await resolveInside([], 'book.epub')).toBeNull();
  });

  it('answers null for a missing file or a path through a file', async () => {
    expect(await resolveInside([lib], 'nope.epub')).toBeNull();
    expect(await resolveInside([lib], 'book.epub/x')).toBeNull();
  });

  it('finds a name stored NFD when asked in NFC, and the exact spelling first', async () => {
    const nfd = 'Cafe\u0301 Cre\u0300me.epub';
    const nfc = nfd.normalize('NFC');
    expect(nfc).not.toBe(nfd);
    expect(await resolveInside([lib], nfd)).toEqual({ abs: path.join(lib, nfd), root: lib });
    expect(await resolveInside([lib], nfc)).toEqual({ abs: path.join(lib, nfd), root: lib });
  });
});

describe('checkFolder', () => {
  it('accepts a readable directory and answers its real path', async () => {
    expect(await checkFolder(lib)).toEqual({ ok: true, real: lib });
    expect(await checkFolder(path.join(base, 'lib-link'))).toEqual({ ok: true, real: lib });
    expect(await checkFolder(`${lib}/sub/..`)).toEqual({ ok: true, real: lib });
  });

  it('names what is wrong', async () => {
    expect(await checkFolder('books')).toEqual({ ok: false, reason: 'folder must be an absolute path: books' });
    const missing = path.join(base, 'nope');
    expect(await checkFolder(missing)).toEqual({ ok: false, reason: `folder does not exist: ${missing}` });
    const file = path.join(lib, 'book.epub');
    expect(await checkFolder(file)).toEqual({ ok: false, reason: `not a directory: ${file}` });
    expect(await checkFolder(path.join(file, 'x'))).toEqual({ ok: false, reason: `folder does not exist: ${path.join(file, 'x')}` });
  });

  it('refuses a folder it cannot list', async () => {
    const locked = path.join(base, 'locked');
    await mkdir(locked);
    await chmod(locked, 0o000);
    await chmod(base, 0o755); // mkdtemp's 0700 would hide everything from the unprivileged user
    try {
      const r = await asUnprivileged(() => checkFolder(locked));
      expect(r).toEqual({ ok: false, reason: `folder is not readable: ${locked}` });
    } finally {
      await chmod(locked, 0o755);
    }
  });
});
