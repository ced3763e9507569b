// The kosync protocol's account routes, at one prefix: healthcheck, users/create (a Bindery account)
// and users/auth (a check of the sign-in).
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { KosyncContext } from './kosync-context';
import { KosyncBody, KosyncHeaders, keyField, kosyncError, kosyncFailures } from './kosync-protocol';

export function kosyncAccountRoutes(app: FastifyInstance, { identity, createLimited, signed }: KosyncContext, prefix: string): void {
  const tags = ['kosync'];
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
    headers: KosyncHeaders,
    response: { 200: Type.Object({ authorized: Type.String() }), ...kosyncFailures(401, 429, 502) },
  };
  app.get(`${prefix}/users/auth`, { ...signed, schema: authSchema }, async () => ({ authorized: 'OK' }));
}
