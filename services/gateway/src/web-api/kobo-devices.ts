// A user's Kobos: made here by their owner (a Kobo cannot run the registration flow), given a new
// store address (the earlier one stops working), and told which books they get. The store address
// is in the answer only; device-sync keeps the token's SHA-256.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DeviceSync, fail, isUuid } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { CallDeviceSync } from '../http/device-sync-client';
import type { Origins } from '../http/origin';
import { sendFailure, sendResult } from '../http/reply';
import { koboSetup, koboUrl } from '../kobo/address';
import { param } from './reading-progress';
import { errors, IdParams, SIGNED_IN } from '../http/schemas';
import { KoboCreated, KoboSettings, KoboToken } from './device-schemas';
import { CreateBody, SettingsBody } from '@bindery/contracts/api/device';

const M = DeviceSync.DeviceSyncMessages;

export interface KoboDeviceDeps {
  auth: Auth;
  devices: CallDeviceSync;
  /** which Host may go into the Kobo's address */
  origins: Origins;
}

const tags = ['devices'];
const refused = errors(400, ...SIGNED_IN, 404);

export function koboDeviceRoutes(app: FastifyInstance, deps: KoboDeviceDeps): void {
  const user = { onRequest: deps.auth.requireUser };
  const caller = (req: FastifyRequest) => ({ caller: req.caller! });

  app.post('/api/devices/kobo', { ...user, schema: { tags, summary: 'add a Kobo', body: CreateBody, response: { 201: KoboCreated, ...refused } } }, async (req, reply) => {
    const r = await deps.devices('kobo-create', { ...caller(req), input: req.body as Record<string, unknown> });
    if (!r.ok) return sendFailure(reply, r.error);
    const { kobo_token, ...v } = r.value;
    return reply
      .code(201)
      .header('Cache-Control', 'no-store')
      .send({ ...v, ...koboSetup(koboUrl(req, kobo_token, deps.origins)) });
  });

  app.post(
    '/api/devices/:id/kobo-token',
    { ...user, schema: { tags, summary: 'a new store address for a Kobo', params: IdParams, response: { 200: KoboToken, ...refused } } },
    async (req, reply) => {
      if (!isUuid(param(req))) return sendFailure(reply, fail('validation', M.invalidDeviceId));
      const r = await deps.devices('kobo-token-issue', { ...caller(req), id: param(req) });
      if (!r.ok) return sendFailure(reply, r.error);
      const { kobo_token, ...v } = r.value;
      reply.header('Cache-Control', 'no-store');
      return { ...v, ...koboSetup(koboUrl(req, kobo_token, deps.origins)) };
    },
  );

  app.put(
    '/api/devices/:id/kobo',
    { ...user, schema: { tags, summary: 'which books a Kobo gets', params: IdParams, body: SettingsBody, response: { 200: KoboSettings, ...refused } } },
    async (req, reply) => sendResult(reply, await deps.devices('kobo-settings', { ...caller(req), id: param(req), input: req.body as Record<string, unknown> })),
  );
}
