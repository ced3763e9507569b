// An item's cover as an editor sets it (issue 43): an uploaded picture, a page of the book, or the
// book's own again. The picture is decoded and re-encoded here (sharp, with the covers' pixel cap),
// so only a bounded JPEG travels to the catalog, which renders the cover files and records the
// change as an event (the cover field is then locked: a rescan keeps it).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, isUuid, Messages } from '@bindery/contracts';
import { sendFailure, sendResult } from '../http/reply';
import { errors, IdParams, SIGNED_IN } from '../http/schemas';
import type { Streams } from '../opds/streams';
import type { CatalogDeps } from './libraries';
import { MediaItem } from './catalog-schemas';

/** What an uploaded picture may be: its type, bytes and pixels. */
export const COVER_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif'] as const;
export const COVER_MAX_BYTES = 20 * 1024 * 1024;
const MAX_INPUT_PIXELS = 100_000_000;
/** The JPEG sent to the catalog: its longest side, and at most this many bytes (the bus's payload is 1 MB, base64 adds a third). */
const SENT_SIDE = 1600;
const SENT_MAX_BYTES = 640 * 1024;

const loadSharp = () => import('sharp').then((m) => m.default);

/** A picture as a bounded JPEG, or null when it is no picture sharp can read within the caps. */
export async function boundedJpeg(image: Buffer): Promise<Buffer | null> {
  const sharp = await loadSharp();
  try {
    const base = sharp(image, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS, animated: false }).autoOrient().flatten({ background: '#ffffff' });
    for (const [side, quality] of [
      [SENT_SIDE, 85],
      [1200, 75],
      [900, 65],
    ] as const) {
      const out = await base.clone().resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }).jpeg({ quality }).toBuffer();
      if (out.length <= SENT_MAX_BYTES) return out;
    }
    return null;
  } catch {
    return null;
  }
}

export function itemEditRoutes(app: FastifyInstance, { catalog, auth, reads }: CatalogDeps, streams: Streams): void {
  const editor = { onRequest: auth.requireEditor };
  const tags = ['media items'];
  const id = (req: FastifyRequest) => (req.params as { id: string }).id;
  const response = { 200: MediaItem, ...errors(400, ...SIGNED_IN, 404, 413, 415) };

  void app.register(async (sub) => {
    // the picture arrives as the body itself, never buffered past the limit
    for (const type of COVER_TYPES) sub.addContentTypeParser(type, { parseAs: 'buffer', bodyLimit: COVER_MAX_BYTES }, (_req, body, done) => done(null, body));
    sub.put(
      '/api/media-items/:id/cover',
      {
        ...editor,
        bodyLimit: COVER_MAX_BYTES,
        schema: {
          tags,
          summary: 'set the item’s cover (editors): a picture as the body, or {"page": n} for a page of the book',
          params: IdParams,
          response,
        },
      },
      async (req, reply) => {
        if (!isUuid(id(req))) return sendFailure(reply, fail('validation', Messages.invalidMediaItemId));
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        let picture: Buffer | null;
        if (type === 'application/json') {
          const page = (req.body as { page?: unknown } | null)?.page;
          if (typeof page !== 'number' || !Number.isInteger(page) || page < 1 || page > 1_000_000) return sendFailure(reply, fail('validation', Messages.coverPageInvalid));
          const c = await reads.context(req.caller!);
          const doc = await reads.catalog.item(c.access, id(req));
          if (!doc.ok) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
          const item = JSON.parse(doc.value.toString()) as Catalog.MediaItem;
          const stream = await streams.streamOf(item);
          if (!stream || page > stream.count) return sendFailure(reply, fail('validation', Messages.coverPageInvalid));
          const out = await streams.sources.page(stream, page - 1, SENT_SIDE, true).catch(() => null);
          if (!out) return sendFailure(reply, fail('validation', Messages.coverPageInvalid));
          picture = await boundedJpeg(out.data);
        } else if ((COVER_TYPES as readonly string[]).includes(type)) {
          picture = Buffer.isBuffer(req.body) ? await boundedJpeg(req.body) : null;
        } else {
          return sendFailure(reply, fail('unsupported_media_type', Messages.coverImageInvalid));
        }
        if (!picture) return sendFailure(reply, fail('validation', Messages.coverImageInvalid));
        return sendResult(reply, await catalog('item-cover-set', { caller: req.caller!, id: id(req), jpeg_base64: picture.toString('base64') }));
      },
    );
  });
  app.delete(
    '/api/media-items/:id/cover',
    {
      ...editor,
      schema: { tags, summary: 'the item’s cover back to its file’s own (editors)', params: IdParams, response: { 200: MediaItem, ...errors(400, ...SIGNED_IN, 404) } },
    },
    async (req, reply) => sendResult(reply, await catalog('item-cover-reset', { caller: req.caller!, id: id(req) })),
  );
}
