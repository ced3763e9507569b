// /api/system/* (admin) and the public setup status a first-run page polls.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuthDeps } from './auth';
import { Identity } from '@bindery/contracts';
import { Config, ConfigUpdated, ObjectBody, Settings, SettingsUpdated } from './auth-schemas';
import { errors, SIGNED_IN } from '../http/schemas';
import { sendResult } from '../http/reply';

export function systemRoutes(fastify: FastifyInstance, { call, auth }: Pick<AuthDeps, 'call' | 'auth'>): void {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const admin = { onRequest: auth.requireAdmin };
  const tags = ['system'];
  const refused = errors(...SIGNED_IN);
  app.get('/api/system/settings', { ...admin, schema: { tags, summary: 'the system settings (admin)', response: { 200: Settings, ...refused } } }, async (req, reply) =>
    sendResult(reply, await call('settings-get', { caller: req.caller! })),
  );
  app.put(
    '/api/system/settings',
    { ...admin, schema: { tags, summary: 'change system settings (admin)', body: ObjectBody, response: { 200: SettingsUpdated, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await call('settings-put', { caller: req.caller!, input: req.body })),
  );
  app.get('/api/system/config', { ...admin, schema: { tags, summary: 'the raw system configuration (admin)', response: { 200: Config, ...refused } } }, async (req, reply) =>
    sendResult(reply, await call('config-get', { caller: req.caller! })),
  );
  app.put(
    '/api/system/config',
    { ...admin, schema: { tags, summary: 'change the raw system configuration (admin)', body: ObjectBody, response: { 200: ConfigUpdated, ...errors(400, ...SIGNED_IN) } } },
    async (req, reply) => sendResult(reply, await call('config-put', { caller: req.caller!, input: req.body })),
  );
  app.get('/api/setup/status', { schema: { tags, summary: 'whether the first account is still to be made', response: { 200: Identity.SetupStatus } } }, async (_req, reply) =>
    sendResult(reply, await call('setup-status', {})),
  );
}
