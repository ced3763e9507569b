// The web reader's settings kept in the profile (the interface's "reader settings"): for all books
// (/api/reader-settings) and a book's own (/api/media-items/<id>/reader-settings), which win for it.
// Writes go to the reading service (it checks the values and tells them as events); reads come from
// the gateway's reading read model (rv_reader_settings), which a write's answer waits for.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import { SCHEMA } from '../read-model/migrations';
import { readingTables } from '../read-model/reading-tables';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem } from '../http/reading-client';
import { bodyOf } from './auth';
import { errors, SIGNED_IN } from '../http/schemas';
import { ItemParams, param, type ReadingDeps } from './reading-progress';
import { AllBooks, ForBook, Saved, Removed, ReaderSettingsBody as Body } from '@bindery/contracts/api/reading';

const R = readingTables();

export function readerSettingsRoutes(app: FastifyInstance, { auth, reads, reading }: ReadingDeps): void {
  const user = { onRequest: auth.requireUser };
  const tags = ['reader settings'];

  /** The caller's kept settings for all books and, with an item, that book's own. */
  const kept = async (userId: string, item: string | null) => {
    const rows = await reads.db
      .withSchema(SCHEMA)
      .selectFrom(R.readerSettings)
      .select(['item_id', 'settings', 'updated_at'])
      .where('user_id', '=', userId)
      .where('item_id', 'in', item ? ['', item] : [''])
      .execute();
    const of = (k: string) => {
      const r = rows.find((x) => x.item_id === k);
      return r ? { settings: r.settings, updated_at: new Date(r.updated_at).toISOString() } : null;
    };
    return { all_books: of(''), this_book: item ? of(item) : null };
  };

  const write = async (req: FastifyRequest, reply: FastifyReply, item: string | null) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
    return sendResult(reply, await reading(req, 'reader-settings-put', { ...(item ? { item_id: item } : {}), input }));
  };

  app.get(
    '/api/reader-settings',
    { ...user, schema: { tags, summary: 'your reader settings for all books', response: { 200: AllBooks, ...errors(...SIGNED_IN) } } },
    async (req) => {
      const k = await kept(req.caller!.user_id, null);
      return { all_books: k.all_books };
    },
  );
  app.put(
    '/api/reader-settings',
    { ...user, schema: { tags, summary: 'set your reader settings for all books', body: Body, response: { 200: Saved, ...errors(400, ...SIGNED_IN) } } },
    (req, reply) => write(req, reply, null),
  );
  app.get(
    '/api/media-items/:id/reader-settings',
    { ...user, schema: { tags, summary: "your reader settings for all books and this book's own", ...ItemParams, response: { 200: ForBook, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return { media_item_id: item, ...(await kept(req.caller!.user_id, item)) };
    },
  );
  app.put(
    '/api/media-items/:id/reader-settings',
    { ...user, schema: { tags, summary: 'give this book its own reader settings', ...ItemParams, body: Body, response: { 200: Saved, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return write(req, reply, item);
    },
  );
  app.delete(
    '/api/media-items/:id/reader-settings',
    { ...user, schema: { tags, summary: 'this book follows the settings for all books again', ...ItemParams, response: { 200: Removed, ...errors(400, ...SIGNED_IN, 404) } } },
    async (req, reply) => {
      const item = await visibleItem(reads, req, reply, param(req));
      if (!item) return reply;
      return sendResult(reply, await reading(req, 'reader-settings-delete', { item_id: item }));
    },
  );
}
