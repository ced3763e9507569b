// Books to e-readers: each person's e-reader address, and the books they mail to it (recorded
// here, mailed by the send worker).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { type Catalog, type Failure, fail, httpStatusOf, Identity, isUuid, Messages } from '@bindery/contracts';
import { isFragment, sendFailure, sendResult } from '../http/reply';
import { errors, fragmentErrors, params, serviceBody, SIGNED_IN } from '../http/schemas';
import { bodyOf } from './auth';
import { bestFormat, isKindle } from '../mail/sends';
import type { MailContext } from './mail-context';
import { EreaderAddress, SendList, SendManyBody, SentMany } from '@bindery/contracts/api/auth';

/** The answer when a book is too large for the mail limit. */
export const tooLarge = (size: number, limit: number) => `the book is ${megabytes(size)} MB, more than the ${megabytes(limit)} MB a mail may carry`;
const megabytes = (n: number) => (n / 1e6).toFixed(n >= 10e6 ? 0 : 1);
/** The answer when a book has no format the address takes. */
export const noFormatFor = (address: string) =>
  `this book has no format ${isKindle(address) ? 'a Kindle takes (EPUB or PDF)' : 'an e-reader takes by mail (EPUB, PDF, AZW3, MOBI, FB2 or a comic archive)'}`;

/** a send as identity answers it (the contract's own schema) */
const Send = Identity.BookSend;

/** Records a send of one book the caller may see to their address: the answer, or the refusal. */
async function sendOne(c: MailContext, req: FastifyRequest, id: string): Promise<{ ok: true; message: string; send: Identity.BookSend } | { ok: false; failure: Failure }> {
  const { call, mailer } = c;
  const no = (code: Failure['code'], message: string) => ({ ok: false as const, failure: fail(code, message) });
  if (!isUuid(id)) return no('validation', Messages.invalidMediaItemId);
  const ctx = await c.reads.context(req.caller!);
  const found = await c.reads.catalog.item(ctx.access, id);
  if (!found.ok) return no('not_found', Messages.mediaItemNotFound);
  const item = JSON.parse(found.value) as Catalog.MediaItem;
  const a = await call('ereader-get', { caller: req.caller! });
  if (!a.ok) return { ok: false, failure: a.error };
  const address = a.value.address;
  if (address === '') return no('validation', Identity.NO_EREADER_ADDRESS);
  const choice = bestFormat(item.formats, address, c.sends?.converter != null);
  if (!choice) return no('unprocessable', noFormatFor(address));
  const f = choice.file;
  const limit = mailer!.config.maxAttachmentBytes;
  if (f.size > limit) return no('payload_too_large', tooLarge(f.size, limit));
  const base = f.file_path.split('/').pop() ?? `book.${f.format}`;
  // a converted book goes as an EPUB of the same name
  const input = choice.convert
    ? { item_id: item.id, title: item.title, format: 'epub', file_name: `${base.replace(/\.[^.]+$/, '')}.epub`, size: f.size, convert_from: f.format }
    : { item_id: item.id, title: item.title, format: f.format, file_name: base, size: f.size };
  const r = await call('send-create', { caller: req.caller!, input });
  if (!r.ok) return { ok: false, failure: r.error };
  c.sends?.kick();
  return { ok: true, message: `${item.title} is on its way to ${address}`, send: r.value };
}

/** A book or several mailed to the caller's e-reader address, and the sends so far. */
export function bookSendRoutes(app: FastifyInstance, c: MailContext): void {
  const { call, auth, needsMail, ok, tags } = c;
  app.post(
    '/api/media-items/:id/send',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'mail a book to your e-reader address (its best format for the address)',
        params: params({ id: 'the media item' }),
        response: { 202: Type.Object({ message: Type.String(), send: Send }), ...fragmentErrors(400, 404, 413, 422), ...errors(...SIGNED_IN, 502, 503) },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const r = await sendOne(c, req, (req.params as { id: string }).id);
      if (!r.ok) return sendFailure(reply, r.failure, isFragment(req));
      return ok(req, reply, 202, { message: r.message, send: r.send });
    },
  );
  app.post(
    '/api/media-items/send',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'mail several books to your e-reader address, each on its own',
        body: SendManyBody,
        response: {
          200: SentMany,
          ...fragmentErrors(400),
          ...errors(...SIGNED_IN, 503),
        },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const ids = (bodyOf(req) ?? {}).media_item_ids;
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 100 || !ids.every((x) => typeof x === 'string'))
        return sendFailure(reply, fail('validation', 'media_item_ids must be a list of 1 to 100 media item ids'), isFragment(req));
      const data = [];
      for (const id of new Set(ids as string[])) {
        const r = await sendOne(c, req, id);
        data.push(r.ok ? { media_item_id: id, status: 202, send: r.send } : { media_item_id: id, status: httpStatusOf(r.failure.code), error: r.failure.message });
      }
      const queued = data.filter((x) => x.status === 202).length;
      const message = `${queued} of ${data.length} ${data.length === 1 ? 'book' : 'books'} on the way${queued < data.length ? `; ${data.find((x) => x.error)?.error}` : ''}`;
      return ok(req, reply, 200, { message, data });
    },
  );
  app.get(
    '/api/sends',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: { tags, summary: 'the books you sent to your e-reader, newest first', response: { 200: SendList, ...errors(...SIGNED_IN, 503) } },
    },
    async (req, reply) => sendResult(reply, await call('sends-list', { caller: req.caller! })),
  );
}

/** The caller's e-reader address: read, set or removed. */
export function ereaderRoutes(app: FastifyInstance, c: MailContext): void {
  const { call, auth, needsMail, ok, tags } = c;
  app.get(
    '/api/auth/ereader',
    { onRequest: [auth.requireUser, needsMail], schema: { tags, summary: 'your e-reader’s e-mail address', response: { 200: EreaderAddress, ...errors(...SIGNED_IN, 503) } } },
    async (req, reply) => sendResult(reply, await call('ereader-get', { caller: req.caller! })),
  );
  app.put(
    '/api/auth/ereader',
    {
      onRequest: [auth.requireUser, needsMail],
      schema: {
        tags,
        summary: 'set your e-reader’s e-mail address (empty removes it)',
        body: serviceBody({ address: 'e.g. name@kindle.com' }),
        response: { 200: Type.Object({ message: Type.String(), address: Type.String() }), ...fragmentErrors(400), ...errors(...SIGNED_IN, 503) },
      },
      config: { fragmentErrors: true },
    },
    async (req, reply) => {
      const input = bodyOf(req);
      if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), isFragment(req));
      const r = await call('ereader-set', { caller: req.caller!, input });
      if (!r.ok) return sendFailure(reply, r.error, isFragment(req));
      return ok(req, reply, 200, r.value);
    },
  );
}
