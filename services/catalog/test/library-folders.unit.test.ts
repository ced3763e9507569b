// The folder rule: what no library may be, whatever LIBRARY_ROOTS allows. Judged on real paths.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { inSystemTree, isSystemFolder, overlaps, realOrResolved } from '@bindery/platform';
import { Messages } from '@bindery/contracts';
import { forbiddenFolder } from '../src/handlers/libraries';
import type { Ctx } from '../src/handlers/context';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'bindery-folders-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('system folders', () => {
  it('are refused exactly, and everything inside the system trees', () => {
    for (const p of ['/', '/etc', '/proc', '/sys', '/dev', '/boot', '/root', '/run', '/var', '/var/lib', '/usr', '/usr/local', '/bin', '/sbin', '/lib', '/lib64', '/opt', '/tmp']) {
      expect(isSystemFolder(p), p).toBe(true);
    }
    for (const p of ['/etc/ssl', '/proc/self', '/proc/1/root', '/sys/kernel', '/dev/shm', '/boot/grub']) {
      expect(isSystemFolder(p), p).toBe(true);
      expect(inSystemTree(p), p).toBe(true);
    }
  });

  it('leave ordinary places alone, and judge by whole segments', () => {
    for (const p of [
      '/books',
      '/srv/books',
      '/mnt/nas/comics',
      '/media/usb',
      '/home/ann/Books',
      '/run/media/ann/USB',
      '/var/lib/books',
      '/usr/share/books',
      join(tmpdir(), 'library'),
      '/etcetera',
      '/devices',
      '/procs',
    ]) {
      expect(isSystemFolder(p), p).toBe(false);
    }
    expect(inSystemTree('/usr')).toBe(false);
    expect(inSystemTree('/')).toBe(false);
  });
});

describe('overlaps', () => {
  it('is true for the same folder, one inside the other either way, and nothing else', () => {
    expect(overlaps('/srv/data', '/srv/data')).toBe(true);
    expect(overlaps('/srv/data', '/srv/data/books')).toBe(true);
    expect(overlaps('/srv/data', '/srv')).toBe(true);
    expect(overlaps('/srv/data', '/srv/data2')).toBe(false);
    expect(overlaps('/srv/data', '/srv/books')).toBe(false);
  });

  it('realOrResolved resolves links, and paths that do not exist yet', async () => {
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    expect(await realOrResolved(join(base, 'link'))).toBe(join(base, 'real'));
    expect(await realOrResolved(join(base, 'not-yet', '..', 'later'))).toBe(join(base, 'later'));
  });
});

describe('forbiddenFolder', () => {
  const ctx = (dataDir: string) => ({ rt: { dataDir } }) as unknown as Ctx;
  it('names the reason: a system folder, or the data directory (by its real path)', async () => {
    mkdirSync(join(base, 'srv', 'data', 'books'), { recursive: true });
    mkdirSync(join(base, 'srv', 'books'));
    symlinkSync(join(base, 'srv', 'data'), join(base, 'data-link'));
    const c = ctx(join(base, 'data-link')); // DATA_DIR given through a link
    expect(await forbiddenFolder(c, '/etc')).toBe(Messages.folderIsSystem);
    expect(await forbiddenFolder(c, '/proc/self')).toBe(Messages.folderIsSystem);
    expect(await forbiddenFolder(c, join(base, 'srv', 'data'))).toBe(Messages.folderOverlapsDataDir);
    expect(await forbiddenFolder(c, join(base, 'srv', 'data', 'books'))).toBe(Messages.folderOverlapsDataDir);
    expect(await forbiddenFolder(c, join(base, 'srv'))).toBe(Messages.folderOverlapsDataDir);
    expect(await forbiddenFolder(c, join(base, 'srv', 'books'))).toBeNull();
    expect(Messages.folderIsSystem).toBe('folder is a system folder');
    expect(Messages.folderOverlapsDataDir).toBe('folder must not be, contain or lie inside the data directory');
  });
});
