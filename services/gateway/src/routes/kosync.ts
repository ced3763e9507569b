// KOReader's stock Progress sync (the kosync protocol, no plugin), under /api/kosync and at the root
// paths (some clients drop the prefix): users/create, users/auth, syncs/progress, healthcheck. A
// Bindery user signs in with their own username and password (KOReader sends md5(password) as
// `x-auth-key`), or with a device's sync key typed as the password (then the device is named in
// what it pushes); failures answer the reference server's codes and bodies `{code, message}`.
// Beside it, the caller's documents under /api/kosync/documents (user session): list, auto link,
// bulk link, link one, candidates by search.
import Type from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, rateLimitedMessage } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import type { Reader } from '../http/reading-client';
import type { AuthFailures } from '../http/auth-failures';
import { sendFailure, sendResult } from '../http/reply';
import type { SyncKeys } from '../http/sync-keys';
import { PASSWORD_TTL_MS, type Verified, type VerifiedCache } from '../http/verified-cache';
import { KosyncView } from '../read-model/kosync-view';
import { sendJson, type Reads } from '../read-model/reads';
import { queryOf } from './libraries';
import { ErrorBody, errors, Nullable, params, query, SIGNED_IN } from '../http/schemas';
import { SearchResult } from './catalog-schemas';

export const KOSYNC_PREFIX = '/api/kosync';
/** how long a verified key is taken on trust before it is checked again (argon2 is slow) */
export const KOSYNC_TTL_MS = PASSWORD_TTL_MS;

/** The reference server's errors (koreader-sync-server config/errors.lua). */
export const KosyncErrors = {
  2000: { status: 502, message: 'Unknown server error.' },
  2001: { status: 401, message: 'Unauthorized' },
  2002: { status: 402, message: 'Username is already registered.' },
  2003: { status: 403, message: 'Invalid request' },
  2004: { status: 403, message: "Field 'document' not provided." },
  2005: { status: 402, message: 'User registration is disabled.' },
} as const;
type KosyncCode = keyof typeof KosyncErrors;

/** the reference server's failure body (and ours, `{error}`, for a spent attempt budget) */
const KosyncFailure = Type.Union([Type.Object({ code: Type.Integer(), message: Type.String() }), ErrorBody], { description: "the reference server's `{code, message}`" });
const kosyncFailures = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, KosyncFailure]));
const KosyncBody = (description: string) => Type.Unknown({ description: `${description}; checked by the route, with the reference server's codes` });
const Position = Type.Object(
  {
    document: Type.Optional(Type.String()),
    percentage: Type.Optional(Type.Number()),
    progress: Type.Optional(Type.String()),
    device: Type.Optional(Type.String()),
    device_id: Type.Optional(Type.String()),
    timestamp: Type.Optional(Type.Number()),
  },
  { description: 'the last position pushed for the document; `{}` when there is none' },
);
const KosyncDocument = Type.Object(
  { document: Type.String(), media_item_id: Nullable(Type.String()), item: Type.Unknown(), suggested_media_item_id: Nullable(Type.String()) },
  { description: 'a document KOReader pushed, and the book it is linked to' },
);

const kosyncError = (reply: FastifyReply, code: KosyncCode) => reply.code(KosyncErrors[code].status).send({ code, message: KosyncErrors[code].message });

/** the reference server's key fields: text, not empty, no colon */
const keyField = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1024 && !v.includes(':');
const DOCUMENT = /^[A-Za-z0-9_-]{1,128}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** the device whose sync key signed a kosync request in (null: the user's password did) */
    kosyncDevice: { device_id: string; name: string } | null;
  }
}

export interface KosyncDeps {
  auth: Auth;
  identity: CallIdentity;
  reads: Reads;
  reading: Reader;
  /** the reading client for the protocol's push: it waits for no read model (a pull after it is a new cache key) */
  pushReading?: Reader;
  /** the budgets of failed credential checks per address (a key is checked like a password here) */
  failures: AuthFailures;
  /** users/create carries the per-address request limit of register */
  createLimited?: boolean;
  /** the sign-ins taken on trust (shared with OPDS) */
  verified: VerifiedCache;
  /** devices' sync keys, checked before the password */
  syncKeys: SyncKeys;
}

export function kosyncRoutes(
  app: FastifyInstance,
  { auth, identity, reads, reading, pushReading = reading, failures, createLimited = false, verified, syncKeys }: KosyncDeps,
): void {
  const view = new KosyncView(reads.db);
  /** pushes answered by this gateway: part of a pull's cache key */
  let pushes = 0;
  app.decorateRequest('kosyncDevice', null);
  /** onRequest of the protocol's signed-in routes: sets `req.caller`, or answers 2001 (or 429 / 503). */
  const requireKosync = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const wait = failures.wait(req.ip, 'password');
    if (wait)
      return reply
        .code(429)
        .header('Retry-After', String(wait))
        .send({ code: 2001, message: rateLimitedMessage(wait) });
    const user = req.headers['x-auth-user'];
    const key = req.headers['x-auth-key'];
    if (!keyField(user) || typeof key !== 'string' || key === '') return kosyncError(reply, 2001);
    const signIn = (v: Verified) => {
      req.caller = { user_id: v.user_id, role: v.role };
      req.kosyncDevice = v.device ?? null;
    };
    const hit = verified.get('kosync', [user, key]);
    if (hit) return signIn(hit);
    const outcome = await verified.once('kosync', [user, key], async (): Promise<Verified | 'unavailable' | 'refused'> => {
      // a device's sync key first (only users with one run its check), then the password
      const byDevice = await syncKeys.verify(user, key.slice(0, 1024));
      if (byDevice) {
        verified.set('kosync', [user, key], byDevice);
        return byDevice;
      }
      const r = await identity('kosync-verify', { login: user, key: key.slice(0, 1024) });
      if (!r.ok) return r.error.code === 'service_unavailable' ? 'unavailable' : 'refused';
      const v = r.value as Verified;
      verified.set('kosync', [user, key], { user_id: v.user_id, role: v.role });
      return v;
    });
    if (outcome === 'unavailable') return kosyncError(reply, 2000);
    if (outcome === 'refused') {
      failures.failed(req.ip, 'password');
      return kosyncError(reply, 2001);
    }
    signIn(outcome);
  };
  const signed = { onRequest: requireKosync };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;

  for (const prefix of ['', KOSYNC_PREFIX]) {
    const tags = ['kosync'];
    const kosyncUser = { 'x-auth-user': Type.Optional(Type.String()), 'x-auth-key': Type.Optional(Type.String()) };
    const headers = Type.Object(kosyncUser, { description: 'the username and the password (or a device sync key)' });
    app.get(`${prefix}/healthcheck`, { schema: { tags, summary: 'KOReader sync: alive', response: { 200: Type.Object({ state: Type.String() }) } } }, async () => ({
      state: 'OK',
    }));

    const createSchema = {
      tags,
      summary: 'KOReader sync: sign up (a Bindery account)',
      body: KosyncBody('`{username, password}`'),
      response: { 201: Type.Object({ username: Type.String() }), ...kosyncFailures(402, 403, 429, 502) },
    };
    app.post(`${prefix}/users/create`, { schema: createSchema, config: createLimited ? { rateLimit: {} } : {} }, async (req, reply) => {
      const b = (req.body ?? {}) as Record<string, unknown>;
      if (typeof b !== 'object' || Array.isArray(b) || !keyField(b.username) || typeof b.password !== 'string' || b.password === '') return kosyncError(reply, 2003);
      const r = await identity('kosync-create', { username: b.username, key: b.password.slice(0, 1024) });
      if (r.ok) return reply.code(201).send({ username: b.username });
      if (r.error.code === 'conflict') return kosyncError(reply, 2002);
      if (r.error.code === 'registration_disabled') return kosyncError(reply, 2005);
      if (r.error.code === 'validation') return kosyncError(reply, 2003);
      return kosyncError(reply, 2000);
    });

    const authSchema = {
      tags,
      summary: 'KOReader sync: check a sign-in',
      headers,
      response: { 200: Type.Object({ authorized: Type.String() }), ...kosyncFailures(401, 429, 502) },
    };
    app.get(`${prefix}/users/auth`, { ...signed, schema: authSchema }, async () => ({ authorized: 'OK' }));

    const pushed = Type.Object({ document: Type.String(), timestamp: Type.Number(), healed: Type.Optional(Type.Array(Type.String())) });
    const pushSchema = {
      tags,
      summary: 'KOReader sync: push a position',
      headers,
      body: KosyncBody('`{document, percentage, progress, device, device_id}`'),
      response: { 200: pushed, ...kosyncFailures(401, 403, 429, 502) },
    };
    app.put(`${prefix}/syncs/progress`, { ...signed, schema: pushSchema }, async (req, reply) => {
      const b = req.body;
      if (typeof b !== 'object' || b === null || Array.isArray(b)) return kosyncError(reply, 2003);
      const body = b as Record<string, unknown>;
      if (!keyField(body.document)) return kosyncError(reply, 2004);
      if (!DOCUMENT.test(body.document)) return kosyncError(reply, 2003);
      const percentage =
        typeof body.percentage === 'number' ? body.percentage : typeof body.percentage === 'string' && body.percentage.trim() !== '' ? Number(body.percentage) : Number.NaN;
      if (!Number.isFinite(percentage) || percentage < 0 || percentage > 1) return kosyncError(reply, 2003);
      if (typeof body.progress !== 'string' || body.progress.length > 4096 || typeof body.device !== 'string' || body.device === '' || body.device.length > 100)
        return kosyncError(reply, 2003);
      if (body.device_id !== undefined && body.device_id !== null && (typeof body.device_id !== 'string' || body.device_id.length > 128)) return kosyncError(reply, 2003);
      const document = body.document.toLowerCase();
      const a = await access(req);
      const item = await view.itemOf(a, document);
      const r = await pushReading(req, 'kosync-push', {
        access: a,
        ...(item ? { item_id: item } : {}),
        input: {
          document,
          progress: body.progress,
          percentage,
          device: body.device,
          device_id: (body.device_id as string | null | undefined) ?? '',
          // signed in with a device's sync key: the position names that device
          ...(req.kosyncDevice ? { bindery_device: req.kosyncDevice } : {}),
        },
      });
      // after the answer, before a pull can follow it: a pull from here reads the push back
      pushes++;
      if (!r.ok) return r.error.code === 'validation' ? kosyncError(reply, 2003) : kosyncError(reply, 2000);
      const v = r.value as { document: string; timestamp: number; healed?: string[] };
      // the reference server's answer; what had to change in the position (a page past the last
      // one, say) is added only when something did: KOReader reads the fields it knows
      return { document: body.document, timestamp: v.timestamp, ...(v.healed?.length ? { healed: v.healed } : {}) };
    });

    const pullSchema = {
      tags,
      summary: 'KOReader sync: the last position',
      headers,
      params: params({ document: 'the document id' }),
      response: { 200: Position, ...kosyncFailures(401, 403, 429, 502) },
    };
    app.get(`${prefix}/syncs/progress/:document`, { ...signed, schema: pullSchema }, async (req, reply) => {
      const raw = (req.params as { document: string }).document;
      if (!keyField(raw)) return kosyncError(reply, 2004);
      // an id no push could have stored has no progress
      if (!DOCUMENT.test(raw)) return {};
      const document = raw.toLowerCase();
      const c = await reads.context(req.caller!);
      // the answer is kept until the read models move past a reading or catalog change (a position
      // written anywhere, a book or a library access changed), as the dashboard's is: devices
      // opening a book pull far more often than anyone writes. A push waits for no read model, so
      // each push through this gateway is a new key as well (decisions 84).
      // A pull records what the device was given (decision "Devices follow the position they were
      // given"): a device's sync key names it, so its pulls are not answered from another's entry.
      const by = req.kosyncDevice?.device_id ?? '-';
      const key = `kosync-pull|${c.key}|${c.positions.reading ?? 0}|${pushes}|${req.caller!.user_id}|${by}|${raw}`;
      const r = await reads.cached(key, async () => {
        const item = await view.itemOf(c.access, document);
        const r = await reading(req, 'kosync-pull', {
          access: c.access,
          ...(item ? { item_id: item } : {}),
          query: { document },
          ...(req.kosyncDevice ? { input: { bindery_device: req.kosyncDevice } } : {}),
        });
        if (!r.ok) return r;
        const v = r.value as Record<string, unknown>;
        // the id as the device sent it
        return { ok: true, value: JSON.stringify('document' in v ? { ...v, document: raw } : v) };
      });
      if (!r.ok) return kosyncError(reply, 2000);
      return sendJson(reply, r.value);
    });
  }

  // ---- the caller's documents (user session) ----
  const user = { onRequest: auth.requireUser };
  const DocParams = Type.Object({ document: Type.String({ pattern: DOCUMENT.source }) });
  const docParams = { schema: { params: DocParams }, config: { paramsFailure: fail('validation', 'document must be a KOReader document id') } };
  const docOf = (req: FastifyRequest) => (req.params as { document: string }).document.toLowerCase();

  type Doc = { document: string; media_item_id: string | null; [k: string]: unknown };
  const decorate = async (req: FastifyRequest, docs: Doc[]) => {
    const a = await access(req);
    const titles = await view.titles(a, [...new Set(docs.map((d) => d.media_item_id).filter((x): x is string => x !== null))]);
    const linked = (d: Doc) => (d.media_item_id ? (titles.get(d.media_item_id) ?? null) : null);
    // what auto link would choose for each unlinked document, in one query
    const suggested = await view.itemsOf(
      a,
      docs.filter((d) => !linked(d)).map((d) => d.document),
    );
    return docs.map((d) => {
      const item = linked(d);
      return { ...d, media_item_id: item ? d.media_item_id : null, item, suggested_media_item_id: item ? null : (suggested.get(d.document) ?? null) };
    });
  };

  const tags = ['kosync documents'];
  const refused = errors(400, ...SIGNED_IN, 404);
  const docQuery = query({ status: 'linked or unlinked', limit: 'how many', offset: 'how many to skip' });
  app.get(
    `${KOSYNC_PREFIX}/documents`,
    { ...user, schema: { tags, summary: 'your KOReader documents', querystring: docQuery, response: { 200: Type.Object({ data: Type.Array(KosyncDocument) }), ...refused } } },
    async (req, reply) => {
      const r = await reading(req, 'kosync-documents', { access: await access(req), query: queryOf(req) });
      if (!r.ok) return sendFailure(reply, r.error);
      return { data: await decorate(req, (r.value as { data: Doc[] }).data) };
    },
  );

  /** Links one document (null unlinks); the item must be one the caller sees. */
  const link = async (req: FastifyRequest, document: string, item: string | null, kind: 'user' | 'catalog') => {
    if (item !== null) {
      const a = await access(req);
      if (!(await reads.catalog.itemLibrary(a, item))) return { ok: false as const, error: fail('not_found', Messages.mediaItemNotFound) };
      return reading(req, 'kosync-link', { access: a, item_id: item.toLowerCase(), kind, query: { document } });
    }
    return reading(req, 'kosync-link', { access: await access(req), kind, query: { document } });
  };

  const autoLinked = Type.Object({
    linked: Type.Array(Type.Object({ document: Type.String(), media_item_id: Type.String(), status: Type.String() })),
    unmatched: Type.Array(Type.String()),
  });
  app.post(
    `${KOSYNC_PREFIX}/documents/auto-link`,
    { ...user, schema: { tags, summary: 'link unlinked documents to the books they match', response: { 200: autoLinked, ...refused } } },
    async (req, reply) => {
      const a = await access(req);
      const r = await reading(req, 'kosync-documents', { access: a, query: { status: 'unlinked' } });
      if (!r.ok) return sendFailure(reply, r.error);
      const linked: { document: string; media_item_id: string; status: string }[] = [];
      const unmatched: string[] = [];
      const docs = (r.value as { data: Doc[] }).data;
      const found = await view.itemsOf(
        a,
        docs.map((d) => d.document),
      );
      for (const d of docs) {
        const item = found.get(d.document);
        if (!item) {
          unmatched.push(d.document);
          continue;
        }
        const l = await link(req, d.document, item, 'catalog');
        if (l.ok) linked.push({ document: d.document, media_item_id: item, status: (l.value as { status: string }).status });
        else unmatched.push(d.document);
      }
      return { linked, unmatched };
    },
  );

  const Links = Type.Object({
    links: Type.Array(Type.Object({ document: Type.String({ pattern: DOCUMENT.source }), media_item_id: Type.String({ format: 'uuid' }) }), { minItems: 1, maxItems: 500 }),
  });
  const linkedMany = Type.Object({
    message: Type.String(),
    succeeded: Type.Array(Type.Object({ document: Type.String(), media_item_id: Type.String(), status: Type.String() })),
    failed: Type.Array(Type.Object({ document: Type.String(), error: Type.String() })),
  });
  app.post(
    `${KOSYNC_PREFIX}/documents/link`,
    { ...user, schema: { tags, summary: 'link documents to books', body: Links, response: { 200: linkedMany, ...refused } } },
    async (req) => {
      const succeeded: { document: string; media_item_id: string; status: string }[] = [];
      const failed: { document: string; error: string }[] = [];
      for (const l of (req.body as Type.Static<typeof Links>).links) {
        const r = await link(req, l.document.toLowerCase(), l.media_item_id, 'user');
        if (r.ok) succeeded.push({ document: l.document.toLowerCase(), media_item_id: l.media_item_id.toLowerCase(), status: (r.value as { status: string }).status });
        else failed.push({ document: l.document, error: r.error.message });
      }
      return { message: `${succeeded.length} linked, ${failed.length} failed`, succeeded, failed };
    },
  );

  const LinkOne = Type.Object({ media_item_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]) });
  const linkedOne = Type.Object({ status: Type.String(), document: KosyncDocument });
  app.put(
    `${KOSYNC_PREFIX}/documents/:document`,
    { ...user, ...docParams, schema: { tags, summary: 'link a document to a book (null unlinks)', params: DocParams, body: LinkOne, response: { 200: linkedOne, ...refused } } },
    async (req, reply) => {
      const r = await link(req, docOf(req), (req.body as Type.Static<typeof LinkOne>).media_item_id, 'user');
      if (!r.ok) return sendFailure(reply, r.error);
      const v = r.value as { status: string; document: Doc };
      return { status: v.status, document: (await decorate(req, [v.document]))[0] };
    },
  );

  const candidatesSchema = {
    tags,
    summary: 'books a document might be',
    params: DocParams,
    querystring: query({ q: 'free text (required)', limit: 'how many (default 20)', offset: 'how many to skip' }),
    response: { 200: SearchResult, ...refused },
  };
  app.get(`${KOSYNC_PREFIX}/documents/:document/candidates`, { ...user, ...docParams, schema: candidatesSchema }, async (req, reply) => {
    const q = queryOf(req);
    const text = typeof q.q === 'string' ? q.q.trim() : '';
    if (text === '') return sendFailure(reply, fail('validation', 'q is required'));
    const c = await reads.context(req.caller!);
    const r = await reads.catalog.search(c.access, { q: text, limit: typeof q.limit === 'string' ? q.limit : '20', offset: typeof q.offset === 'string' ? q.offset : '0' });
    return r.ok ? sendJson(reply, r.value) : sendResult(reply, r);
  });
}
