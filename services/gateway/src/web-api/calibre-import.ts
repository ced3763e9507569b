// POST /api/libraries/<id>/calibre-import (admin): calibre's ratings and "read" marks of a calibre
// library's books become a person's reading state (issue 44). The admin chooses whose (default:
// their own). Each goes through the reading service's own commands as that person: a rating is
// `rating-create` (calibre's 0–10 is Bindery's 0.5–5 in halves: half of it), a read mark a finished
// position (`progress-put`, percentage 1, written by the device "calibre"), so reading's rules,
// events and projections apply as to any other write. A rating or a position the person already
// has is theirs and stays: the import adds only what is missing, so running it again changes
// nothing more. What calibre holds comes from the catalog read model (the items' `calibre`).
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { type Catalog, fail, isUuid, Messages, type Reading, type Result } from '@bindery/contracts';
import Type from 'typebox';
import type { Auth } from '../http/authenticate';
import { sendFailure, sendResult } from '../http/reply';
import type { CallCatalog } from '../http/rpc';
import type { Reader } from '../http/reading-client';
import { errors, IdParams, SIGNED_IN, serviceBody } from '../http/schemas';
import { SCHEMA } from '../read-model/migrations';
import type { Reads } from '../read-model/reads';
import { readingTables } from '../read-model/reading-tables';
import { catalogTables, identityTables } from '../read-model/tables';
import { bodyOf } from './auth';
import { CalibreReportAnswer } from '@bindery/contracts/api/catalog';

export interface CalibreImportDeps {
  auth: Auth;
  reads: Reads;
  reading: Reader;
  catalog: CallCatalog;
}

const Counts = Type.Object({
  imported: Type.Integer({ description: 'written now' }),
  already: Type.Integer({ description: 'the person already had the same' }),
  kept: Type.Integer({ description: 'the person has their own, which stays' }),
  conflicts: Type.Integer({ description: 'offered to the person as a progress conflict by the reading service' }),
  failed: Type.Integer(),
});
const ImportResult = Type.Object(
  {
    library_id: Type.String(),
    user_id: Type.String(),
    username: Type.String(),
    books: Type.Integer({ description: 'books with a calibre rating or read mark' }),
    ratings: Counts,
    read: Counts,
    message: Type.String(),
  },
  { description: "what calibre's ratings and read marks became" },
);

type Count = { imported: number; already: number; kept: number; conflicts: number; failed: number };
const zero = (): Count => ({ imported: 0, already: 0, kept: 0, conflicts: 0, failed: 0 });

/** calibre rates 1–10 (two per star, odd for half stars); Bindery 0.5–5 in halves. */
export const ratingFromCalibre = (r: number): number => r / 2;

export function calibreImportRoutes(app: FastifyInstance, deps: CalibreImportDeps): void {
  calibreReportRoute(app, deps);
  calibreImportRoute(app, deps);
}

/** The migration report as the library's last scan recorded it (the catalog's calibre_reports). */
function calibreReportRoute(app: FastifyInstance, { auth, catalog }: CalibreImportDeps): void {
  const reportSchema = {
    tags: ['libraries'],
    summary: "what a library's last scan took from calibre, and what it could not map (admin)",
    params: IdParams,
    response: {
      200: CalibreReportAnswer,
      ...errors(400, ...SIGNED_IN, 404),
    },
  };
  app.get('/api/libraries/:id/calibre-report', { onRequest: auth.requireAdmin, schema: reportSchema }, async (req, reply) =>
    sendResult(reply, await catalog('calibre-report', { caller: req.caller!, id: (req.params as { id: string }).id })),
  );
}

/** The import: the request and the person checked, then what the person lacks written as them. */
function calibreImportRoute(app: FastifyInstance, { auth, reads, reading }: CalibreImportDeps): void {
  const schema = {
    tags: ['libraries'],
    summary: "make a calibre library's ratings and read marks a person's reading state (admin)",
    params: IdParams,
    body: serviceBody({ user_id: 'whose reading state they become (default: yours)' }),
    response: { 200: ImportResult, ...errors(400, ...SIGNED_IN, 404) },
  };
  app.post('/api/libraries/:id/calibre-import', { onRequest: auth.requireAdmin, schema }, async (req, reply) => {
    const libraryId = (req.params as { id: string }).id;
    if (!isUuid(libraryId)) return sendFailure(reply, fail('validation', Messages.invalidLibraryId));
    const input = bodyOf(req);
    if (input === null) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
    const unknown = Object.keys(input).filter((k) => k !== 'user_id');
    if (unknown.length > 0) return sendFailure(reply, fail('validation', `unknown field: ${unknown[0]!.slice(0, 40)}`));
    const given = input.user_id;
    if (given !== undefined && given !== '' && (typeof given !== 'string' || !isUuid(given))) return sendFailure(reply, fail('validation', "user_id must be a user's id"));
    const userId = (typeof given === 'string' && given !== '' ? given : req.caller!.user_id).toLowerCase();
    const s = reads.db.withSchema(SCHEMA);
    const lib = await reads.catalog.library({ all: true }, true, libraryId);
    if (!lib.ok) return sendFailure(reply, lib.error);
    const who = await s.selectFrom(identityTables().users).select(['id', 'role', 'profile', 'all_libraries', 'library_ids']).where('id', '=', userId).executeTakeFirst();
    if (!who) return sendFailure(reply, fail('not_found', Messages.userNotFound));
    const username = String((who.profile as { username?: unknown }).username ?? userId);
    const sees = who.role === 'admin' || who.all_libraries || (who.library_ids as string[]).map((x) => x.toLowerCase()).includes(libraryId.toLowerCase());
    if (!sees) return sendFailure(reply, fail('validation', `${username} may not see the library ${lib.value.name}: give them access first`));

    const books = await calibreBooks(s, libraryId);
    const own = await ownState(
      s,
      userId,
      books.map((b) => b.id),
    );
    // the person's own request to the reading service: their rules, their stream
    const as = { caller: { user_id: userId, role: who.role === 'admin' ? 'admin' : 'user' } } as unknown as FastifyRequest;
    const call: Call = {
      rate: (item, input) => reading(as, 'rating-create', { item_id: item, input }),
      markRead: (item, input) => reading(as, 'progress-put', { item_id: item, input }),
    };
    const { r, p } = await importBooks(books, own, call, req.log);
    return reply.send({
      library_id: libraryId.toLowerCase(),
      user_id: userId,
      username,
      books: books.length,
      ratings: r,
      read: p,
      message: summary(username, r, p),
    });
  });
}

type Db = ReturnType<Reads['db']['withSchema']>;
type Book = { id: string; rating: number | null; read: boolean };
type Own = Awaited<ReturnType<typeof ownState>>;
/** The person's own requests to the reading service: a rating, a read mark. */
type Call = {
  rate: (item: string, input: Record<string, unknown>) => Promise<Result<Reading.ReadingResult<'rating-create'>>>;
  markRead: (item: string, input: Record<string, unknown>) => Promise<Result<Reading.ReadingResult<'progress-put'>>>;
};

/** The library's calibre books with a rating or a read mark, from the catalog read model. */
async function calibreBooks(s: Db, libraryId: string): Promise<Book[]> {
  const rows = await s.selectFrom(catalogTables().items).select(['id', 'doc']).where('library_id', '=', libraryId).where('doc', 'like', '%"calibre":%').orderBy('id').execute();
  const books: Book[] = [];
  for (const r of rows) {
    const c = (JSON.parse(r.doc) as Catalog.MediaItem).calibre;
    if (!c) continue;
    const rating = c.rating !== null && Number.isInteger(c.rating) && c.rating >= 1 && c.rating <= 10 ? ratingFromCalibre(c.rating) : null;
    if (rating !== null || c.read === true) books.push({ id: r.id, rating, read: c.read === true });
  }
  return books;
}

/** What the person already has of these books: ratings, positions, open progress conflicts. */
async function ownState(s: Db, userId: string, ids: string[]) {
  const rt = readingTables();
  const [ratings, progress, conflicts] =
    ids.length === 0
      ? [[], [], []]
      : await Promise.all([
          s.selectFrom(rt.ratings).select(['item_id', 'rating']).where('user_id', '=', userId).where('item_id', 'in', ids).execute(),
          s.selectFrom(rt.progress).select(['item_id', 'percentage']).where('user_id', '=', userId).where('item_id', 'in', ids).execute(),
          s.selectFrom(rt.conflicts).select(['item_id']).where('user_id', '=', userId).where('item_id', 'in', ids).execute(),
        ]);
  return {
    hasRating: new Map(ratings.map((r) => [r.item_id, Number(r.rating)])),
    hasProgress: new Map(progress.map((p) => [p.item_id, Number(p.percentage)])),
    inConflict: new Set(conflicts.map((c) => c.item_id)),
  };
}

/** Each book's rating, then its read mark, through `call`, unless the person has their own. */
async function importBooks(books: Book[], { hasRating, hasProgress, inConflict }: Own, call: Call, log: FastifyBaseLogger): Promise<{ r: Count; p: Count }> {
  const r = zero();
  const p = zero();
  for (const b of books) {
    if (b.rating !== null) {
      const mine = hasRating.get(b.id);
      if (mine !== undefined) {
        if (mine === b.rating) r.already++;
        else r.kept++;
      } else {
        const out = await call.rate(b.id, { rating: b.rating });
        if (out.ok) r.imported++;
        else if (out.error.code === 'conflict') r.kept++;
        else {
          r.failed++;
          log.warn({ item: b.id, err: out.error.message }, 'calibre import: a rating was refused');
        }
      }
    }
    if (b.read) {
      const at = hasProgress.get(b.id);
      if (at !== undefined) {
        if (at >= 1) p.already++;
        else p.kept++;
      } else if (inConflict.has(b.id)) p.kept++;
      else {
        const out = await call.markRead(b.id, { percentage: 1, client: 'calibre', device: 'calibre' });
        if (!out.ok) {
          p.failed++;
          log.warn({ item: b.id, err: out.error.message }, 'calibre import: a read mark was refused');
        } else {
          const status = out.value.status;
          if (status === 'conflict') p.conflicts++;
          else if (status === 'kept') p.kept++;
          else p.imported++;
        }
      }
    }
  }
  return { r, p };
}

const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;

function summary(who: string, r: Count, p: Count): string {
  const part = (c: Count, one: string, many: string) => {
    const bits = [`${n(c.imported, one, many)} imported`];
    if (c.already) bits.push(`${c.already} already so`);
    if (c.kept) bits.push(`${c.kept} kept as ${who} had ${c.kept === 1 ? 'it' : 'them'}`);
    if (c.conflicts) bits.push(`${c.conflicts} offered as a progress conflict`);
    if (c.failed) bits.push(`${c.failed} refused`);
    return bits.join(', ');
  };
  return `calibre's ratings and read marks for ${who}: ${part(r, 'rating', 'ratings')}; ${part(p, 'read mark', 'read marks')}`;
}
