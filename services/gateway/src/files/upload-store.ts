// Where an uploaded book goes and how it gets there: a folder of the library (and a subfolder under
// it, checked segment by segment on real paths), a hidden temporary name in that folder (the scanner
// and the watcher skip dot-files) written while hashing SHA-256 and counting against the limit, then
// fsynced and given its own name without ever replacing a file (a hard link that fails on a taken
// name, " (1)", " (2)" … after it). Whatever fails (the limit, a full disk, the client going away),
// the temporary file and any folder made for it are removed.
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, lstat, mkdir, open, realpath, rename, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errnoOf, isInside } from '@bindery/platform';

/** A name or folder a person gave that cannot be used; `message` says why. */
export class BadTarget extends Error {}
/** The body passed the size limit while it was being read. */
export class TooLarge extends Error {}
/** The disk (or the user's quota) is full. */
export class DiskFull extends Error {}
/** The body came slower than its pace allows. */
export class Stalled extends Error {}

/** At least `minBytes` of the body in every `windowMs`, or the upload is given up. */
export interface Pace {
  windowMs: number;
  minBytes: number;
}

export const TEMP_PREFIX = '.bindery-upload-';
const MAX_NAME_BYTES = 255;
const MAX_SUBFOLDER_DEPTH = 16;
// C0 and C1 controls, DEL, and the line and paragraph separators
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A file or folder name that is one plain, visible segment; the reason it is not, else null. */
function segmentProblem(s: string, what: string): string | null {
  if (s === '') return `${what} is empty`;
  if (CONTROL.test(s)) return `${what} must not contain control characters`;
  if (s === '.' || s === '..') return `${what} must not be "." or ".."`;
  if (s.includes('/') || s.includes('\\')) return `${what} must not contain "/" or "\\"`;
  if (s.startsWith('.')) return `${what} must not start with "." (hidden files are not catalogued)`;
  if (Buffer.byteLength(s) > MAX_NAME_BYTES) return `${what} is longer than ${MAX_NAME_BYTES} bytes`;
  if (s.trim() !== s) return `${what} must not start or end with spaces`;
  return null;
}

/** The file name, checked (a plain name, no path); throws BadTarget. NFC, as the catalog keeps names. */
export function checkName(raw: string): string {
  const name = raw.normalize('NFC');
  const p = segmentProblem(name, 'the file name');
  if (p) throw new BadTarget(p);
  return name;
}

/** The subfolder's segments ('' or absent: none), checked; throws BadTarget. */
export function checkSubfolder(raw: string | undefined): string[] {
  if (raw === undefined || raw === '') return [];
  const s = raw.normalize('NFC');
  if (s.startsWith('/') || s.startsWith('\\') || /^[A-Za-z]:/.test(s)) throw new BadTarget('the subfolder must be a path inside the folder, not an absolute path');
  const parts = s.split('/');
  if (parts.length > MAX_SUBFOLDER_DEPTH) throw new BadTarget(`the subfolder is more than ${MAX_SUBFOLDER_DEPTH} folders deep`);
  for (const part of parts) {
    const p = segmentProblem(part, 'a subfolder name');
    if (p) throw new BadTarget(p);
  }
  return parts;
}

export interface TargetDir {
  /** the real path of the folder the file goes into */
  dir: string;
  /** folders made for this upload, deepest last (removed again if it fails) */
  made: string[];
}

/**
 * The real folder under `root` for `segments`, made where missing. A segment that exists must be a
 * folder whose real path stays inside the root (a symlink leading out of the library is refused).
 */
export async function targetDir(root: string, segments: string[]): Promise<TargetDir> {
  const realRoot = await realpath(root).catch(() => {
    throw new BadTarget('the library folder cannot be read on this server');
  });
  let dir = realRoot;
  const made: string[] = [];
  try {
    for (const seg of segments) {
      const next = path.join(dir, seg);
      const st = await lstat(next).catch((e) => (errnoOf(e) === 'ENOENT' ? null : Promise.reject(e)));
      if (st === null) {
        await mkdir(next);
        made.push(next);
        dir = next;
        continue;
      }
      const real = await realpath(next);
      if (!isInside(realRoot, real)) throw new BadTarget('the subfolder leads outside the library folder');
      const target = st.isSymbolicLink() ? await lstat(real) : st;
      if (!target.isDirectory()) throw new BadTarget(`the subfolder "${seg}" is a file, not a folder`);
      dir = real;
    }
    return { dir, made };
  } catch (e) {
    await removeMade(made);
    if (errnoOf(e) === 'ENOSPC' || errnoOf(e) === 'EDQUOT') throw new DiskFull();
    throw e;
  }
}

export async function removeMade(made: string[]): Promise<void> {
  for (const d of [...made].reverse()) await rmdir(d).catch(() => {});
}

export interface Received {
  temp: string;
  size: number;
  sha256: string;
}

/**
 * Streams `body` into a new hidden file in `dir`, hashing and counting; past `maxBytes` it stops with
 * TooLarge, slower than `pace` with Stalled. The file is fsynced before this returns; on any failure
 * it is removed.
 */
export async function receive(body: Readable, dir: string, maxBytes: number, pace?: Pace): Promise<Received> {
  const temp = path.join(dir, `${TEMP_PREFIX}${randomUUID()}.part`);
  const hash = createHash('sha256');
  let size = 0;
  let ok = false;
  let counted = 0;
  let watch: NodeJS.Timeout | undefined;
  try {
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new TooLarge());
        hash.update(chunk);
        done(null, chunk);
      },
    });
    if (pace) {
      watch = setInterval(() => {
        if (size - counted < pace.minBytes) counter.destroy(new Stalled());
        counted = size;
      }, pace.windowMs);
    }
    // 'wx': a new file, never one that is there (a FileHandle's stream left the pipeline waiting)
    await pipeline(body, counter, createWriteStream(temp, { flags: 'wx', mode: 0o644, highWaterMark: 1024 * 1024 }));
    // fsync is per file, not per descriptor: the bytes written reach the disk before the rename
    const fh = await open(temp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    ok = true;
    return { temp, size, sha256: hash.digest('hex') };
  } catch (e) {
    if (errnoOf(e) === 'ENOSPC' || errnoOf(e) === 'EDQUOT') throw new DiskFull();
    throw e;
  } finally {
    clearInterval(watch);
    if (!ok) await unlink(temp).catch(() => {});
  }
}

/** `name` with " (n)" before its extension (`.kepub.epub` and `.fb2.zip` kept whole). */
export function suffixed(name: string, n: number): string {
  if (n === 0) return name;
  const m = /(\.kepub\.epub|\.fb2\.zip|\.[^.]+)$/i.exec(name);
  const ext = m && m.index > 0 ? m[0] : '';
  return `${name.slice(0, name.length - ext.length)} (${n})${ext}`;
}

/**
 * Gives the temporary file its name in `dir`, never replacing one: the first free of `name`,
 * `name (1)` … Returns the name used. The folder is fsynced so the name survives a crash.
 */
export async function place(temp: string, dir: string, name: string): Promise<string> {
  for (let n = 0; n < 1000; n++) {
    const candidate = suffixed(name, n);
    if (Buffer.byteLength(candidate) > MAX_NAME_BYTES) throw new BadTarget(`the file name is longer than ${MAX_NAME_BYTES} bytes`);
    const final = path.join(dir, candidate);
    try {
      // link fails on a taken name (rename would replace it)
      await link(temp, final);
    } catch (e) {
      const code = errnoOf(e);
      if (code === 'EEXIST') continue;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw new DiskFull();
      // a file system without hard links: the name is checked, then taken by rename
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw e;
      if (
        await lstat(final).then(
          () => true,
          () => false,
        )
      )
        continue;
      await rename(temp, final);
      await syncDir(dir);
      return candidate;
    }
    await unlink(temp);
    await syncDir(dir);
    return candidate;
  }
  throw new BadTarget('too many files of this name in the folder');
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => null);
  if (!fh) return;
  await fh.sync().catch(() => {});
  await fh.close().catch(() => {});
}
