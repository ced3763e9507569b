// Read your writes across gateway replicas: the answer to a write carries the log positions the
// gateway waited for (the `Bindery-Position` header and a short-lived cookie); a request that presents
// them (either way) waits, bounded, until this replica's read models are known to have applied them.
// Requests without one are served from the positions the replica keeps in memory (docs/decisions.md,
// "Read side: position tokens").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { currentRequestContext } from '@bindery/platform';
import type { ReadModels } from '../read-model/read-model';

export const POSITION_HEADER = 'bindery-position';
export const POSITION_COOKIE = 'bindery_position';
/** long enough for any replica to have caught up with the shared checkpoints many times over */
const COOKIE_MAX_AGE_S = 60;
const MAX_TOKEN = 512;
const PART = /^([a-z][a-z-]{0,31}):(\d{1,15})$/;

/** `catalog:120|identity:7` → {catalog: 120, identity: 7}; null when it is not such a text (ignored, never an error). */
export function parsePositions(raw: unknown): Record<string, number> | null {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_TOKEN) return null;
  const out: Record<string, number> = {};
  for (const part of raw.split(/\s*[|,]\s*/)) {
    const m = PART.exec(part.trim());
    if (!m) return null;
    const n = Number(m[2]);
    if (out[m[1]!] === undefined || n > out[m[1]!]!) out[m[1]!] = n;
  }
  return out;
}

export const formatPositions = (p: Readonly<Record<string, number>>): string =>
  Object.keys(p)
    .sort()
    .map((k) => `${k}:${p[k]}`)
    .join('|');

/** What the request presented: the header when present, else the cookie. */
function presented(req: FastifyRequest): Record<string, number> | null {
  const h = req.headers[POSITION_HEADER];
  if (h !== undefined) return parsePositions(Array.isArray(h) ? h.join('|') : h);
  const c = req.cookies?.[POSITION_COOKIE];
  return c === undefined ? null : parsePositions(c);
}

/**
 * Registers the hook that honours presented tokens, and makes every write the gateway waited for
 * answer with the token (merged with the one presented, so positions of other sources stay).
 */
export function positionTokens(app: FastifyInstance, models: ReadModels, opts: { waitMs: number; secureCookie: boolean }): void {
  app.addHook('onRequest', (req, reply, done) => {
    const ctx = currentRequestContext();
    if (ctx) ctx.onWritten = (source, position) => answerWithPosition(req, reply, source, position, opts.secureCookie);
    // cheap when nothing is presented or this replica already knows the positions: no query
    if (req.headers[POSITION_HEADER] === undefined && req.headers.cookie?.includes(POSITION_COOKIE) !== true) return done();
    const wanted = presented(req);
    if (!wanted || models.reached(wanted)) return done();
    models.reach(wanted, opts.waitMs).then(
      () => done(),
      (e: unknown) => {
        req.log.warn({ err: e }, 'waiting for a position token failed');
        done();
      },
    );
  });
}

function answerWithPosition(req: FastifyRequest, reply: FastifyReply, source: string, position: number, secure: boolean): void {
  if (reply.sent) return;
  const current = parsePositions(reply.getHeader(POSITION_HEADER)) ?? presented(req) ?? {};
  if (position > (current[source] ?? 0)) current[source] = position;
  const token = formatPositions(current);
  reply.header(POSITION_HEADER, token);
  reply.setCookie(POSITION_COOKIE, token, { path: '/', httpOnly: true, sameSite: 'lax', maxAge: COOKIE_MAX_AGE_S, secure });
}
