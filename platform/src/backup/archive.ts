// A backup archive: one ZIP file (yazl/yauzl) holding the snapshot's parts and `manifest.json`, which
// names the format and its version, the Bindery version, the mode, the time, each service's log
// position and every part with its size and SHA-256. A reader checks all of that before a byte of the
// archive is used, so a damaged or cut-short file is refused whole.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';

export const BACKUP_FORMAT = 'bindery-backup';
/** the archive layout this code writes; a restore reads this version and every earlier one it names in READABLE_VERSIONS */
export const BACKUP_FORMAT_VERSION = 1;
export const READABLE_VERSIONS: readonly number[] = [1];
export const MANIFEST = 'manifest.json';
/** the largest manifest a reader takes (a list of parts, not data) */
const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

export interface ArchiveEntry {
  path: string;
  bytes: number;
  sha256: string;
}

export interface ServiceState {
  /** the service (its schema is the name with `-` as `_`) */
  service: string;
  schema: string;
  /** events in its log and the last position, as the snapshot saw them */
  events: number;
  last_position: number;
  /** how far its outbox relay had published to JetStream (distributed), as the snapshot saw it */
  relay_position: number | null;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  bindery_version: string;
  mode: 'embedded' | 'distributed';
  created_at: string;
  /** how the database part was taken */
  database: { kind: 'pglite-data-dir'; path: string } | { kind: 'pg-dump'; paths: Record<string, string>; server_version: string };
  services: ServiceState[];
  /** JetStream's streams when the snapshot was taken (distributed; informational: a restore republishes from the logs) */
  streams?: Record<string, { messages: number; last_seq: number }>;
  entries: ArchiveEntry[];
}

export class BackupError extends Error {
  override name = 'BackupError';
}

/** A part of an archive: bytes in hand, or a file on disk (read twice: its hash, then its copy). */
export type Part = { path: string; data: Buffer } | { path: string; file: string };

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function hashFile(file: string): Promise<{ bytes: number; sha256: string }> {
  const h = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: h.digest('hex') };
}

/** A safe name inside an archive: relative, `/`-separated, no `..`, no control characters. */
export function safeEntryPath(p: string): boolean {
  if (p.length === 0 || p.length > 1024 || p.startsWith('/') || p.includes('\\')) return false;
  if (/[\u0000-\u001f\u007f]/.test(p)) return false;
  return p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/**
 * Writes the archive to `file` all or nothing: into a temporary file beside it, flushed to disk, then
 * renamed over the name (an interrupted backup leaves no file that looks whole).
 */
export async function writeArchive(file: string, manifest: Omit<Manifest, 'entries'>, parts: Part[]): Promise<Manifest> {
  const entries: ArchiveEntry[] = [];
  const zip = new yazl.ZipFile();
  for (const p of parts) {
    if (!safeEntryPath(p.path) || p.path === MANIFEST) throw new BackupError(`not a part name: ${p.path}`);
    if ('data' in p) {
      entries.push({ path: p.path, bytes: p.data.length, sha256: sha256(p.data) });
      // the database parts are compressed already
      zip.addBuffer(p.data, p.path, { compress: !p.path.endsWith('.gz') });
    } else {
      const h = await hashFile(p.file);
      entries.push({ path: p.path, ...h });
      zip.addFile(p.file, p.path, { compress: !/\.(jpe?g|png|webp|gif|gz)$/i.test(p.path) });
    }
  }
  const full: Manifest = { ...manifest, entries };
  zip.addBuffer(Buffer.from(JSON.stringify(full, null, 2)), MANIFEST);
  zip.end();
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.partial`);
  try {
    await pipeline(zip.outputStream as Readable, createWriteStream(tmp, { mode: 0o600 }));
    const fh = await open(tmp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    // a file a later read finds cut short (the disk filled) is refused here, not at restore
    await verifyArchive(tmp);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  return full;
}

const damaged = (why: string) => new BackupError(`the backup archive is damaged or incomplete (${why}); nothing was restored`);

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((res, rej) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (e, z) => (e ? rej(damaged(e.message)) : res(z!))),
  );
}

/** An opened archive: its manifest, checked, and a way to read each part as a stream. */
export interface OpenArchive {
  manifest: Manifest;
  read(path: string): Promise<Readable>;
  close(): void;
}

async function listEntries(z: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  const out = new Map<string, yauzl.Entry>();
  await new Promise<void>((res, rej) => {
    z.on('entry', (e: yauzl.Entry) => {
      if (out.has(e.fileName)) return rej(damaged(`the part ${e.fileName} appears twice`));
      out.set(e.fileName, e);
      z.readEntry();
    });
    z.on('end', () => res());
    z.on('error', (e: Error) => rej(damaged(e.message)));
    z.readEntry();
  });
  return out;
}

function streamOf(z: yauzl.ZipFile, e: yauzl.Entry): Promise<Readable> {
  return new Promise((res, rej) => z.openReadStream(e, (err, s) => (err ? rej(damaged(err.message)) : res(s!))));
}

async function bytesOf(s: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of s) {
    n += (c as Buffer).length;
    if (n > max) throw damaged('the manifest is too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks);
}

function checkManifest(raw: unknown): Manifest {
  const m = raw as Partial<Manifest> | null;
  if (!m || typeof m !== 'object' || m.format !== BACKUP_FORMAT) throw new BackupError('not a Bindery backup archive (its manifest does not name the format bindery-backup)');
  if (typeof m.format_version !== 'number' || !READABLE_VERSIONS.includes(m.format_version))
    throw new BackupError(
      `this backup is in format version ${String(m.format_version)}, which this Bindery cannot read (it reads ${READABLE_VERSIONS.join(', ')}); restore it with the release that made it (${String(m.bindery_version)}) or a later one`,
    );
  if (m.mode !== 'embedded' && m.mode !== 'distributed') throw damaged('the manifest names no mode');
  if (!Array.isArray(m.entries) || !Array.isArray(m.services) || !m.database) throw damaged('the manifest lists no parts');
  for (const e of m.entries)
    if (!e || typeof e.path !== 'string' || !safeEntryPath(e.path) || typeof e.bytes !== 'number' || typeof e.sha256 !== 'string') throw damaged('the manifest lists a part badly');
  return m as Manifest;
}

/** Opens an archive and checks its manifest and every part's size and SHA-256 against it. */
export async function openArchive(file: string): Promise<OpenArchive> {
  try {
    await stat(file);
  } catch {
    throw new BackupError(`no backup archive at ${file}`);
  }
  const z = await openZip(file);
  try {
    const entries = await listEntries(z);
    const me = entries.get(MANIFEST);
    if (!me) throw damaged('it has no manifest.json');
    let manifest: Manifest;
    try {
      manifest = checkManifest(JSON.parse((await bytesOf(await streamOf(z, me), MANIFEST_MAX_BYTES)).toString('utf8')));
    } catch (e) {
      if (e instanceof BackupError) throw e;
      throw damaged(`its manifest is unreadable: ${(e as Error).message}`);
    }
    for (const want of manifest.entries) {
      const e = entries.get(want.path);
      if (!e) throw damaged(`the part ${want.path} is missing`);
      const h = createHash('sha256');
      let n = 0;
      try {
        for await (const c of await streamOf(z, e)) {
          h.update(c as Buffer);
          n += (c as Buffer).length;
        }
      } catch (err) {
        if (err instanceof BackupError) throw err;
        throw damaged(`the part ${want.path} cannot be read: ${(err as Error).message}`);
      }
      if (n !== want.bytes || h.digest('hex') !== want.sha256) throw damaged(`the part ${want.path} does not match its checksum`);
    }
    return {
      manifest,
      read: async (path) => {
        const e = entries.get(path);
        if (!e) throw damaged(`the part ${path} is missing`);
        return streamOf(z, e);
      },
      close: () => z.close(),
    };
  } catch (e) {
    z.close();
    throw e;
  }
}

/** Checks an archive whole (its manifest and every part) and closes it. */
export async function verifyArchive(file: string): Promise<Manifest> {
  const a = await openArchive(file);
  a.close();
  return a.manifest;
}
