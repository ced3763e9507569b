// /api/system/* (admin) and the public setup status a first-run page polls.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthDeps } from './auth';
import { ObjectBody } from './auth-schemas';
import { sendResult } from '../http/reply';

export function systemRoutes(fastify: FastifyInstance, { call, auth }: Pick<AuthDeps, 'call' | 'auth'>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const admin = { onRequest: auth.requireAdmin };
  const put = { ...admin, schema: { body: ObjectBody } };
  app.get('/api/system/settings', admin, async (req, reply) => sendResult(reply, await call('settings-get', { caller: req.caller! })));
  app.put('/api/system/settings', put, async (req, reply) => sendResult(reply, await call('settings-put', { caller: req.caller!, input: req.body })));
  app.get('/api/system/config', admin, async (req, reply) => sendResult(reply, await call('config-get', { caller: req.caller! })));
  app.put('/api/system/config', put, async (req, reply) => sendResult(reply, await call('config-put', { caller: req.caller!, input: req.body })));
  app.get('/api/setup/status', async (_req, reply) => sendResult(reply, await call('setup-status', {})));
}
