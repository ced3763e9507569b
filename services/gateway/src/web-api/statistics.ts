// Reading statistics (decision 120): the caller's own (`GET /api/me/statistics`) and the library's
// (`GET /api/admin/statistics`, admins only: everyone in the totals, by name only the people who let
// admins see theirs). Both from the gateway's read models (statistics-view.ts), never another
// person's figures for a user.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Auth } from '../http/authenticate';
import { sendFailure } from '../http/reply';
import { LibraryStatistics, PersonStatistics } from '@bindery/contracts/api/statistics';
import { errors, query, SIGNED_IN } from '../http/schemas';
import type { Reads } from '../read-model/reads';
import { StatisticsView } from '../read-model/statistics-view';
import { fail } from '@bindery/contracts';

/** the message of a `year` that is not a year from 1970 to 9999 */
export const BAD_YEAR = 'year must be a whole number from 1970 to 9999';

/** The `year` asked for (this year, in UTC, when none is given), or null when it is not one. */
export function yearOf(req: FastifyRequest, now = new Date()): number | null {
  const raw = (req.query as { year?: unknown }).year;
  if (raw === undefined) return now.getUTCFullYear();
  if (typeof raw !== 'string' || !/^[0-9]{4}$/.test(raw)) return null;
  const y = Number(raw);
  return y >= 1970 ? y : null;
}

export function statisticsRoutes(app: FastifyInstance, { auth, reads }: { auth: Auth; reads: Reads }): void {
  const view = new StatisticsView(reads.db);
  const querystring = query({ year: 'the year, four digits (this year when absent)' });
  app.get(
    '/api/me/statistics',
    {
      onRequest: auth.requireUser,
      schema: {
        tags: ['statistics'],
        summary: 'your reading statistics for a year',
        querystring,
        response: { 200: PersonStatistics, ...errors(400, ...SIGNED_IN) },
      },
    },
    async (req, reply) => {
      const year = yearOf(req);
      if (year === null) return sendFailure(reply, fail('invalid_request', BAD_YEAR));
      const { access } = await reads.context(req.caller!);
      return view.person(req.caller!.user_id, access, year);
    },
  );
  app.get(
    '/api/admin/statistics',
    {
      onRequest: auth.requireAdmin,
      schema: {
        tags: ['statistics'],
        summary: "the library's reading statistics for a year (by name only the people who share theirs)",
        querystring,
        response: { 200: LibraryStatistics, ...errors(400, ...SIGNED_IN) },
      },
    },
    async (req, reply) => {
      const year = yearOf(req);
      if (year === null) return sendFailure(reply, fail('invalid_request', BAD_YEAR));
      return view.library(year);
    },
  );
}
