// What every route group of the KOReader plugin API shares, built once per app: the device's
// credential (the device acts for its owner), the caller's access, and the book a device names.
// A book is found by uuid, then SHA-256 (the item's, then a format's, then one it had), then the file
// name of `file_path`, then title and author.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { fail, type Failure } from '@bindery/contracts';
import type { DeviceAuth } from '../http/device-auth';
import type { Reader } from '../http/reading-client';
import type { Access } from '../read-model/access';
import { KosyncView } from '../read-model/kosync-view';
import type { Reads } from '../read-model/reads';

export const PLUGIN_PREFIX = '/api/sync/koreader';
export const BOOK_NOT_FOUND = 'book not found';

export interface PluginDeps {
  deviceAuth: DeviceAuth;
  reads: Reads;
  reading: Reader;
}

/** a book found, and by what (uuid, sha256, format_sha256, sha256_history, file_path, title_author) */
export type Found = { item: string; by: string };
type BookKeys = { uuid?: string | null; sha256?: string | null; file_path?: string | null; title?: string | null; author?: string | null };

/** The book found, as `resolve` answers it. */
export interface BookSummary {
  media_item_id: string;
  uuid: string;
  matched_by: string;
  title: unknown;
  authors: unknown;
  sha256: unknown;
  formats: { format: string; sha256: string | null }[];
}

export interface PluginContext {
  reads: Reads;
  reading: Reader;
  view: KosyncView;
  /** the options of every plugin route: a device credential, and the device acting for its owner */
  device: { onRequest: DeviceAuth['requireDevice']; preHandler: (req: FastifyRequest) => Promise<void> };
  access: (req: FastifyRequest) => Promise<Access>;
  notFound: () => Failure;
  /** Resolution: uuid → sha256 (item, format, history) → file name of file_path → title and author. */
  resolve: (req: FastifyRequest, b: BookKeys) => Promise<Found | null>;
  /** The visible item's public record (the catalog view's rendered JSON), or null. */
  recordOf: (a: Access, id: string) => Promise<Record<string, unknown> | null>;
  summary: (req: FastifyRequest, found: Found) => Promise<BookSummary>;
}

export function pluginContext({ deviceAuth, reads, reading }: PluginDeps): PluginContext {
  const view = new KosyncView(reads.db);
  // the device acts for its owner, with at most the owner's role
  const asOwner = async (req: FastifyRequest) => {
    if (req.device) req.caller = deviceAuth.callerOf(req.device);
  };
  const device = { onRequest: deviceAuth.requireDevice, preHandler: asOwner };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  const notFound = (): Failure => fail('not_found', BOOK_NOT_FOUND);

  async function resolve(req: FastifyRequest, b: BookKeys): Promise<Found | null> {
    const a = await access(req);
    if (b.uuid && (await reads.catalog.itemLibrary(a, b.uuid))) return { item: b.uuid.toLowerCase(), by: 'uuid' };
    if (b.sha256 && /^[0-9a-fA-F]{64}$/.test(b.sha256)) {
      const s = await view.itemBySha256(a, b.sha256);
      if (s) return { item: s.item, by: s.by === 'sha256' ? 'sha256' : s.by === 'format_sha256' ? 'format_sha256' : 'sha256_history' };
    }
    const name = b.file_path?.split(/[\\/]/).pop();
    if (name) {
      const f = await view.itemOf(a, createHash('md5').update(name, 'utf8').digest('hex'));
      if (f) return { item: f, by: 'file_path' };
    }
    if (b.title?.trim()) {
      const t = await view.itemByTitle(a, b.title, b.author ?? undefined);
      if (t) return { item: t, by: 'title_author' };
    }
    return null;
  }

  const recordOf = async (a: Access, id: string): Promise<Record<string, unknown> | null> => {
    const r = await reads.catalog.item(a, id);
    return r.ok ? (JSON.parse(r.value) as Record<string, unknown>) : null;
  };

  const summary = async (req: FastifyRequest, found: Found): Promise<BookSummary> => {
    const doc = await recordOf(await access(req), found.item);
    return {
      media_item_id: found.item,
      uuid: found.item,
      matched_by: found.by,
      title: doc?.title ?? null,
      authors: doc?.authors ?? [],
      sha256: doc?.sha256 ?? null,
      formats: ((doc?.formats as { format: string; sha256: string | null }[] | undefined) ?? []).map((f) => ({ format: f.format, sha256: f.sha256 })),
    };
  };

  return { reads, reading, view, device, access, notFound, resolve, recordOf, summary };
}
