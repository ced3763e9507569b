// /api/series, /api/series/<name> and /api/authors: browsing by series and by author, answered from
// the gateway's read models (catalog and reading projections) for the libraries the caller may see,
// cached by the positions the answer reflects. No bus round trip.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Result } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import { sendFailure } from '../http/reply';
import { BrowseView } from '../read-model/browse-view';
import { sendJson, type Reads } from '../read-model/reads';
import { errors, params, query, SIGNED_IN } from '../http/schemas';
import { queryOf } from './libraries';
import { AuthorList, AuthorQuery, SeriesBooksQuery, SeriesDetail, SeriesList, SeriesQuery } from './browse-schemas';

export function browseRoutes(app: FastifyInstance, { auth, reads }: { auth: Auth; reads: Reads }): void {
  const view = new BrowseView(reads.db);
  const user = { onRequest: auth.requireUser };
  const tags = ['browse'];
  const send = (reply: FastifyReply, r: Result<Buffer>) => (r.ok ? sendJson(reply, r.value) : sendFailure(reply, r.error));
  /** an answer with the caller's positions in it: keyed by the reading projection's position and the caller too */
  const theirs = async (req: FastifyRequest, kind: string, render: (access: Awaited<ReturnType<Reads['context']>>['access']) => Promise<Result<string>>) => {
    const c = await reads.context(req.caller!);
    return reads.cached(`${kind}|${c.key}|${c.positions.reading ?? 0}|${req.caller!.user_id}|${req.url}`, () => render(c.access));
  };

  app.get(
    '/api/series',
    {
      ...user,
      schema: { tags, summary: 'the series you may see, with your progress', querystring: query(SeriesQuery), response: { 200: SeriesList, ...errors(400, ...SIGNED_IN) } },
    },
    async (req, reply) => send(reply, await theirs(req, 'series', (access) => view.series(access, queryOf(req), req.caller!.user_id))),
  );
  app.get(
    '/api/series/:name',
    {
      ...user,
      schema: {
        tags,
        summary: 'one series: its books in index order, what to read next, the numbers missing',
        params: params({ name: 'the series name, URL-encoded whole (any case)' }),
        querystring: query(SeriesBooksQuery),
        response: { 200: SeriesDetail, ...errors(400, ...SIGNED_IN, 404) },
      },
    },
    async (req, reply) => {
      const name = (req.params as { name: string }).name;
      return send(reply, await theirs(req, 'series-books', (access) => view.seriesBooks(access, name, queryOf(req), req.caller!.user_id)));
    },
  );
  app.get(
    '/api/authors',
    { ...user, schema: { tags, summary: 'the authors of the books you may see', querystring: query(AuthorQuery), response: { 200: AuthorList, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => {
      const c = await reads.context(req.caller!);
      return send(reply, await reads.cached(`authors|${c.key}|${req.url}`, () => view.authors(c.access, queryOf(req))));
    },
  );
}
