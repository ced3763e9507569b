// The web reader's settings kept in the profile (the interface's "reader settings"): for all books
// (/api/reader-settings) and a book's own (/api/media-items/<id>/reader-settings), which win for it.
// Writes go to the reading service (it checks the values and tells them as events); reads come from
// the gateway's reading read model (rv_reader_settings), which a write's answer waits for.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { fail, Messages } from '@bindery/contracts';
import { SCHEMA } from '../read-model/migrations';
import { readingTables } from '../read-model/reading-tables';
import { sendFailure, sendResult } from '../http/reply';
import { visibleItem } from '../http/reading-client';
import { bodyOf } from './auth';
import { errors, Nullable, routeBody, SIGNED_IN } from '../http/schemas';
import { ItemParams, param, type ReadingDeps } from './reading-progress';

const R = readingTables();

const Settings = Type.Object(
  {
    font_size: Type.Optional(Type.Integer({ description: 'per cent, 60 to 250' })),
    font_family: Type.Optional(Type.String({ description: 'publisher, serif, sans or mono' })),
    line_spacing: Type.Optional(Type.String({ description: 'publisher, 1.2, 1.5 or 1.9' })),
    margins: Type.Optional(Type.String({ description: 'narrow, normal or wide' })),
    text_align: Type.Optional(Type.String({ description: 'publisher, justify or start' })),
    hyphens: Type.Optional(Type.String({ description: 'publisher, auto or none' })),
    theme: Type.Optional(Type.String({ description: 'profile, light, sepia, dark or black' })),
  },
  { description: 'reader settings (an absent field is the reader default)' },
);
const Kept = Type.Object({ settings: Settings, updated_at: Type.String() });
const AllBooks = Type.Object({ all_books: Nullable(Kept) });
const ForBook = Type.Object({ media_item_id: Type.String(), all_books: Nullable(Kept), this_book: Nullable(Kept) });
const Saved = Type.Object({ message: Type.String(), media_item_id: Nullable(Type.String()), settings: Settings, updated_at: Type.String() });
const Removed = Type.Object({ message: Type.String(), media_item_id: Type.String() });
const Body = routeBody(
  {
    font_size: 'per cent, a whole number from 60 to 250',
    font_family: 'publisher, serif, sans or mono',
    line_spacing: 'publisher, 1.2, 1.5 or 1.9',
    margins: 'narrow, normal or wide',
    text_align: 'publisher, justify or start',
    hyphens: 'publisher, auto or none',
    theme: 'profile, light, sepia, dark or black',
  },
  'reader settings, replacing those kept',
);

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
