// /api/system/* (admin) and the public setup status a first-run page polls.
import type { FastifyInstance } from 'fastify';
import { fail, Messages } from '@bindery/contracts';
import type { AuthDeps } from './auth';
import { bodyOf } from './auth';
import { sendFailure, sendResult } from '../http/reply';

export function systemRoutes(app: FastifyInstance, { call, auth }: Pick<AuthDeps, 'call' | 'auth'>): void {
  const admin = { onRequest: auth.requireAdmin };
  app.get('/api/system/settings', admin, async (req, reply) => sendResult(reply, await call('settings-get', { caller: req.caller! })));
  app.put('/api/system/settings', admin, async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
    return sendResult(reply, await call('settings-put', { caller: req.caller!, input }));
  });
  app.get('/api/system/config', admin, async (req, reply) => sendResult(reply, await call('config-get', { caller: req.caller! })));
  app.put('/api/system/config', admin, async (req, reply) => {
    const input = bodyOf(req);
    if (!input) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
    return sendResult(reply, await call('config-put', { caller: req.caller!, input }));
  });
  app.get('/api/setup/status', async (_req, reply) => sendResult(reply, await call('setup-status', {})));
}
