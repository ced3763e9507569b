// The files both catalogs link to: catalogued files named for download, OPDS-PSE pages, and covers
// and thumbnails.
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Catalog, fail, isUuid, Messages } from '@bindery/contracts';
import { resolveInside } from '@bindery/platform';
import { sendFile } from '../files/send';
import { sendFailure } from '../http/reply';
import { UPLOADS_CACHE_CONTROL } from '../web-api/uploads';
import type { OpdsDeps } from './deps';
import { BUSY_RETRY_SECONDS, findPdftoppm, PageBusyError, PageSourceError, PDFTOPPM_MISSING, RenderLimitError } from './page-sources';
import { MAX_SEARCH_PAGES, PdfTextBusyError, PdfTextError } from './pdf-text';
import { coverSchema, fileSchema, pageSchema, pageSearchSchema, pageTextSchema } from './schemas';
import { PSE_CLIENT, PSE_DEVICE, type Streams } from './streams';

const PAGE_NOT_FOUND = 'page not found';
const MAX_WIDTH = 10_000;
const PAGE_NUMBER_MESSAGE = 'page number must be a whole number from 0';
const CONVERT_MESSAGE = 'convert must be jpeg';
const WIDTH_MESSAGE = `width must be a whole number from 1 to ${MAX_WIDTH}`;
const PAGE_TOO_LARGE = 'page too large to render within the server limits';
const PAGES_BUSY = `too many pages are being rendered: try again in ${BUSY_RETRY_SECONDS} seconds`;

/** `width` of a page request: null for none (an app that does not fill {maxWidth} sends the template text), NaN when invalid. */
export function parseWidth(w: string | undefined): number | null {
  if (w === undefined || w === '' || w === '{maxWidth}') return null;
  return /^\d{1,5}$/.test(w) && Number(w) >= 1 && Number(w) <= MAX_WIDTH ? Number(w) : NaN;
}

export function mediaRoutes(app: FastifyInstance, deps: OpdsDeps): void {
  fileRoute(app, deps);
  pageRoute(app, deps);
  pageTextRoutes(app, deps);
  coverRoutes(app, deps);
}

// The files of catalogued items, as /uploads serves them, named for download (KOReader's
// "use server filenames" reads Content-Disposition).
function fileRoute(app: FastifyInstance, { reads }: OpdsDeps): void {
  app.get<{ Params: { libraryId: string; '*': string } }>('/uploads/library-:libraryId/*', fileSchema, async (req, reply) => {
    const { libraryId, '*': rel } = req.params;
    if (!isUuid(libraryId)) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const id = libraryId.toLowerCase();
    const c = await reads.context(req.caller!);
    if (!(await reads.catalog.library(c.access, false, id)).ok) return sendFailure(reply, fail('not_found', Messages.libraryNotFound));
    if ((await reads.catalog.fileItem(c.access, id, rel)) === null) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    const found = await resolveInside((await reads.catalog.folders(id)) ?? [], rel);
    if (!found) return sendFailure(reply, fail('not_found', Messages.fileNotFound));
    return sendFile(req, reply, found.abs, { cacheControl: UPLOADS_CACHE_CONTROL, downloadName: path.posix.basename(rel) });
  });
}

// OPDS-PSE: one page of a comic, a PDF or an image-only EPUB, 0-based, converted to JPEG and
// scaled when asked or needed; a fetch past the user's position records their progress.
function pageRoute(app: FastifyInstance, { reads, reading, streams }: OpdsDeps): void {
  app.get<{ Params: { id: string; n: string }; Querystring: { width?: string; convert?: string } }>('/pages/:id/:n', pageSchema, async (req, reply) => {
    const { id, n } = req.params;
    if (!/^\d{1,6}$/.test(n)) return sendFailure(reply, fail('validation', PAGE_NUMBER_MESSAGE));
    const width = parseWidth(req.query.width);
    if (Number.isNaN(width)) return sendFailure(reply, fail('validation', WIDTH_MESSAGE));
    const convert = req.query.convert;
    if (convert !== undefined && convert !== 'jpeg') return sendFailure(reply, fail('validation', CONVERT_MESSAGE));
    const c = await reads.context(req.caller!);
    const doc = await reads.catalog.item(c.access, id);
    if (!doc.ok) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
    const item = JSON.parse(doc.value) as Catalog.MediaItem;
    const index = Number(n);
    if (item.formats.some((f) => f.format.toLowerCase() === 'pdf') && !item.formats.some((f) => ['cbz', 'cbr'].includes(f.format.toLowerCase())) && !(await findPdftoppm())) {
      return sendFailure(reply, fail('service_unavailable', PDFTOPPM_MISSING));
    }
    const stream = await streams.streamOf(item);
    if (!stream || index >= stream.count) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    let out: Awaited<ReturnType<Streams['sources']['page']>>;
    try {
      out = await streams.sources.page(stream, index, width, convert === 'jpeg');
    } catch (e) {
      if (e instanceof PageSourceError && e.message === PDFTOPPM_MISSING) return sendFailure(reply, fail('service_unavailable', PDFTOPPM_MISSING));
      if (e instanceof PageBusyError) return sendFailure(reply.header('Retry-After', String(BUSY_RETRY_SECONDS)), fail('service_unavailable', PAGES_BUSY));
      if (e instanceof RenderLimitError) {
        req.log.warn({ err: e, item: item.id, page: n }, 'page over the render limits');
        return sendFailure(reply, fail('unprocessable', PAGE_TOO_LARGE));
      }
      // a broken archive or image is a missing page to the reader, and a warning here
      req.log.warn({ err: e, item: item.id, page: n }, 'page unreadable');
      return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    }
    if (!out) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    // only a reader app's own credential (Basic, a key in the path, Bearer) moves the position: a cookie
    // rides along on any navigation, so another site could otherwise move someone's place in a book
    const byApp = req.headers.authorization !== undefined || (req.params as { key?: string }).key !== undefined;
    if (byApp && (await streams.advances(req.caller!.user_id, item.id, index, stream.count))) {
      // not awaited: the page goes out now; the reading service keeps its own rules (guard, conflicts)
      const input = { page: index + 1, page_count: stream.count, client: PSE_CLIENT, device: PSE_DEVICE };
      reading(req, 'progress-put', { item_id: item.id, input }).then(
        (r) => {
          if (!r.ok) req.log.warn({ item: item.id, page: index, error: r.error }, 'page progress not recorded');
        },
        (e: unknown) => req.log.warn({ err: e, item: item.id }, 'page progress not recorded'),
      );
    }
    return reply.header('Cache-Control', 'private, max-age=86400').type(out.type).send(out.data);
  });
}

export const NOT_A_PDF = "this item's pages are not a PDF: they have no text";
export const QUERY_MESSAGE = 'q must be 2 to 200 characters';

// The web reader's text layer and search over a PDF's pages: the item as the caller may see it and
// the file the page stream serves for it (a catalogued file inside its library's folders), read
// with pdf.js within the limits of pdf-text.ts. An item whose pages are not a PDF has no text here.
function pageTextRoutes(app: FastifyInstance, { reads, streams }: OpdsDeps): void {
  /** the PDF streamed for the item, or the failure to send */
  const pdfOf = async (req: FastifyRequest, id: string) => {
    const c = await reads.context(req.caller!);
    const doc = await reads.catalog.item(c.access, id);
    if (!doc.ok) return fail('not_found', Messages.mediaItemNotFound);
    const item = JSON.parse(doc.value) as Catalog.MediaItem;
    const hasPdf = item.formats.some((f) => f.format.toLowerCase() === 'pdf');
    if (hasPdf && !item.formats.some((f) => ['cbz', 'cbr'].includes(f.format.toLowerCase())) && !(await findPdftoppm())) return fail('service_unavailable', PDFTOPPM_MISSING);
    const stream = await streams.streamOf(item);
    if (!stream) return fail('not_found', hasPdf ? PAGE_NOT_FOUND : NOT_A_PDF);
    if (stream.kind !== 'pdf') return fail('not_found', NOT_A_PDF);
    return { item, stream };
  };
  const failed = (req: FastifyRequest, reply: FastifyReply, e: unknown, item: string) => {
    if (e instanceof PdfTextBusyError) return sendFailure(reply.header('Retry-After', String(BUSY_RETRY_SECONDS)), fail('service_unavailable', e.message));
    if (e instanceof PdfTextError) {
      req.log.warn({ err: e, item }, 'PDF text unreadable');
      return sendFailure(reply, fail('unprocessable', e.message));
    }
    throw e;
  };

  app.get<{ Params: { id: string; n: string } }>('/pages/:id/:n/text', pageTextSchema, async (req, reply) => {
    const { id, n } = req.params;
    if (!/^\d{1,6}$/.test(n)) return sendFailure(reply, fail('validation', PAGE_NUMBER_MESSAGE));
    const found = await pdfOf(req, id);
    if ('code' in found) return sendFailure(reply, found);
    const index = Number(n);
    if (index >= found.stream.count) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
    try {
      const text = await streams.texts.page(found.stream.abs, index);
      if (!text) return sendFailure(reply, fail('not_found', PAGE_NOT_FOUND));
      return reply.header('Cache-Control', 'private, max-age=86400').type('application/json').send(text);
    } catch (e) {
      return failed(req, reply, e, found.item.id);
    }
  });

  app.get<{ Params: { id: string }; Querystring: { q?: string | string[] } }>('/pages/:id/search', pageSearchSchema, async (req, reply) => {
    const q = req.query.q;
    if (typeof q !== 'string' || q.trim().length < 2 || q.length > 200) return sendFailure(reply, fail('validation', QUERY_MESSAGE));
    const found = await pdfOf(req, req.params.id);
    if ('code' in found) return sendFailure(reply, found);
    try {
      const answer = await streams.texts.search(found.stream.abs, q.trim(), found.stream.count);
      return reply
        .header('Cache-Control', 'private, no-store')
        .type('application/json')
        .send({ ...answer, truncated: answer.truncated || found.stream.count > MAX_SEARCH_PAGES });
    } catch (e) {
      return failed(req, reply, e, found.item.id);
    }
  });
}

function coverRoutes(app: FastifyInstance, { reads, covers }: OpdsDeps): void {
  for (const [route, kind] of [
    ['covers', 'cover'],
    ['thumbnails', 'thumbnail'],
  ] as const) {
    app.get<{ Params: { id: string } }>(`/${route}/:id`, coverSchema(kind), async (req, reply) => {
      const id = req.params.id;
      const c = await reads.context(req.caller!);
      if (!isUuid(id)) return sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
      const r = await covers.get(req.caller!, c.access, id, kind);
      if (!r.ok) return sendFailure(reply, r.error);
      const cover = r.value;
      reply.header('ETag', cover.etag).header('Cache-Control', 'private, max-age=86400');
      if (req.headers['if-none-match'] === cover.etag) return reply.code(304).send();
      return reply.type(cover.content_type).send(cover.data);
    });
  }
}
