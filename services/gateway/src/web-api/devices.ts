// Devices: registration (public) and its status poll, approval and rejection by a signed-in user,
// a user's devices (list, one, rename, delete), shelves (collections on a device), the sync queue,
// and the per-device sidecar. Lists and sidecars come from the gateway's projections; writes go
// to device-sync. Another user's device or entry does not exist (404).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { DeviceSync, fail, isUuid, Messages } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import { deviceCredentialOf, type DeviceAuth } from '../http/device-auth';
import type { Origins } from '../http/origin';
import type { CallDeviceSync } from '../http/device-sync-client';
import { sendFailure, sendResult } from '../http/reply';
import { DeviceView, SYNC_ENDPOINTS, visibleQueue } from '../read-model/device-view';
import type { Reads } from '../read-model/reads';
import { koboSetup, koboUrl } from '../kobo/address';
import { PLUGIN_DOWNLOAD } from '../koreader/plugin-download';
import { KOSYNC_PREFIX } from '../koreader/kosync-protocol';
import { queryOf } from './libraries';
import { param } from './reading-progress';
import { content, ErrorBody, errors, IdParams, MessageBody, params, query, SIGNED_IN } from '../http/schemas';
import {
  Approved,
  Device,
  DeviceList,
  Pending,
  QueueCleared,
  QueueEntry,
  QueueList,
  QueueStats,
  Registered,
  RegistrationStatus,
  ShelfAdded,
  Shelves,
  Sidecar,
  SyncKey,
} from './device-schemas';
import { NameBody, ShelfBody } from '@bindery/contracts/api/device';

const M = DeviceSync.DeviceSyncMessages;

const RegisterBody = Type.Object({
  name: Type.Optional(Type.Unknown()),
  client: Type.Optional(Type.Unknown()),
  model: Type.Optional(Type.Unknown()),
});
const StatusBody = Type.Object({ device_code: Type.Optional(Type.Unknown()) });

export interface DeviceDeps {
  auth: Auth;
  deviceAuth: DeviceAuth;
  devices: CallDeviceSync;
  reads: Reads;
  /** registration shares the login and register limit per client address */
  rateLimited?: boolean;
  /** which Host may go into absolute addresses */
  origins: Origins;
}

const setupInstructions = (approve: string, plugin: string) =>
  [
    `1. Open ${approve} in a browser where you are signed in to Bindery (you will be asked to sign in first otherwise).`,
    '2. Check the device name and choose Approve.',
    '3. The device keeps polling the status URL and receives its credential once; send it as "Authorization: Device <token>".',
    `4. KOReader: the Bindery plugin is at ${plugin} (unzip it into KOReader's plugins folder); enter this server in it and it syncs positions, highlights and bookmarks through the sync endpoints.`,
    '5. KOReader without the plugin: the approval page shows a sync key once; in Progress sync, log in with your username and that key as the password.',
  ].join('\n');

export function deviceRoutes(app: FastifyInstance, deps: DeviceDeps): void {
  const { auth, deviceAuth, devices, reads } = deps;
  const view = new DeviceView(reads);
  const user = { onRequest: auth.requireUser };
  const caller = (req: FastifyRequest) => ({ caller: req.caller! });
  const badId = (reply: FastifyReply) => sendFailure(reply, fail('validation', M.invalidDeviceId));
  /** the base of absolute addresses in answers: '' (paths) when the Host is not to be believed */
  const origin = (req: FastifyRequest) => deps.origins.publicBase(req) ?? '';
  /** What to type in KOReader's Progress sync for a sync key: the server, the user's username, the key as the password. */
  const tags = ['devices'];
  const refused = errors(400, ...SIGNED_IN, 404);
  const s = (summary: string, rest: object) => ({ ...user, schema: { tags, summary, ...rest } });
  const kosyncSetup = async (req: FastifyRequest, key: string) => {
    const profile = await reads.identity.profile(req.caller!.user_id, reads.models.current().identity ?? 0);
    const username = profile ? (JSON.parse(profile) as { username: string }).username : null;
    return { server: `${origin(req)}${KOSYNC_PREFIX}`, username, password: key };
  };

  const registerSchema = { tags, summary: 'start registering a device (public)', body: RegisterBody, response: { 201: Registered, ...errors(400, 403, 429) } };
  app.post('/api/devices/register', { schema: registerSchema, config: deps.rateLimited ? { rateLimit: {} } : {} }, async (req, reply) => {
    const r = await devices('register', { input: req.body as Record<string, unknown> });
    if (!r.ok) return sendFailure(reply, r.error);
    const v = r.value;
    const path = `/devices/approve/${v.registration_id}`;
    return reply
      .code(201)
      .header('Cache-Control', 'no-store')
      .send({
        device_code: v.device_code,
        user_code: v.registration_id,
        auth_url: path,
        // without a believable Host the device builds it from the server address it was given
        ...(origin(req) ? { verification_uri: `${origin(req)}${path}` } : {}),
        status_url: '/api/devices/register/status',
        expires_in: v.expires_in,
        poll_interval: v.poll_interval,
        setup_instructions: setupInstructions(`${origin(req)}${path}`, `${origin(req)}${PLUGIN_DOWNLOAD}`),
        sync_endpoints: SYNC_ENDPOINTS,
      });
  });

  const statusSchema = { tags, summary: 'poll a registration (public)', body: StatusBody, response: { 200: RegistrationStatus, 410: ErrorBody, ...errors(400, 404) } };
  app.post('/api/devices/register/status', { schema: statusSchema }, async (req, reply) => {
    const r = await devices('register-status', { input: req.body as Record<string, unknown> });
    if (!r.ok) return sendFailure(reply, r.error);
    const v = r.value;
    reply.header('Cache-Control', 'no-store');
    if (v.status === 'expired') return reply.code(410).send({ error: v.error });
    if (v.status === 'pending') return reply.send({ status: 'pending', expires_in: v.expires_in });
    return reply.send({ status: 'approved', device_id: v.device_id, device_token: v.device_token, token_type: 'Device', name: v.name, sync_endpoints: SYNC_ENDPOINTS });
  });

  // a pending registration, by the id of its approval URL
  app.get('/api/devices/pending/:id', s('a pending registration', { params: IdParams, response: { 200: Pending, ...refused, ...errors(410) } }), async (req, reply) =>
    sendResult(reply, await devices('pending-get', { ...caller(req), id: param(req) })),
  );
  const approveBody = Type.Unknown({ description: 'optional `{sync_key: false}` (no key for the stock sync); an object or nothing' });
  app.post(
    '/api/devices/:id/approve',
    s('approve a registration', { params: IdParams, body: approveBody, response: { 200: Approved, ...refused, ...errors(409, 410) } }),
    async (req, reply) => {
      const b = req.body;
      if (b !== undefined && b !== null && (typeof b !== 'object' || Array.isArray(b))) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest));
      const r = await devices('pending-approve', { ...caller(req), id: param(req), input: (b ?? {}) as Record<string, unknown> });
      if (!r.ok) return sendFailure(reply, r.error);
      const { kobo_token, ...v } = r.value;
      reply.header('Cache-Control', 'no-store');
      // a Kobo's store address, shown once (only its token's SHA-256 is kept)
      const kobo = kobo_token ? koboSetup(koboUrl(req, kobo_token, deps.origins)) : {};
      return v.sync_key ? { ...v, ...kobo, kosync: await kosyncSetup(req, v.sync_key) } : { ...v, ...kobo };
    },
  );
  app.post('/api/devices/:id/reject', s('reject a registration', { params: IdParams, response: { 200: MessageBody, ...refused, ...errors(409, 410) } }), async (req, reply) =>
    sendResult(reply, await devices('pending-reject', { ...caller(req), id: param(req) })),
  );

  app.get('/api/devices', s('your devices', { response: { 200: DeviceList, ...errors(...SIGNED_IN) } }), async (req) => ({ devices: await view.list(req.caller!.user_id) }));
  app.get('/api/devices/:id', s('one device', { params: IdParams, response: { 200: Device, ...refused } }), async (req, reply) => {
    if (!isUuid(param(req))) return badId(reply);
    const d = await view.one(req.caller!.user_id, param(req));
    return d ? reply.send(d) : sendFailure(reply, fail('not_found', M.deviceNotFound));
  });
  app.put('/api/devices/:id', s('rename a device', { params: IdParams, body: NameBody, response: { 200: Device, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('device-update', { ...caller(req), id: param(req), input: req.body as Record<string, unknown> })),
  );
  app.delete('/api/devices/:id', s('delete a device', { params: IdParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('device-delete', { ...caller(req), id: param(req) })),
  );
  // a new sync key for KOReader's stock sync (the earlier one stops working), shown in this answer only
  app.post('/api/devices/:id/sync-key', s('a new sync key for the stock KOReader sync', { params: IdParams, response: { 200: SyncKey, ...refused } }), async (req, reply) => {
    if (!isUuid(param(req))) return badId(reply);
    const r = await devices('sync-key-issue', { ...caller(req), id: param(req) });
    if (!r.ok) return sendFailure(reply, r.error);
    const v = r.value;
    reply.header('Cache-Control', 'no-store');
    return { ...v, kosync: await kosyncSetup(req, v.sync_key) };
  });

  // shelves: collections of the reading service put on a device
  app.get('/api/devices/:id/shelves', s("a device's shelves", { params: IdParams, response: { 200: Shelves, ...refused } }), async (req, reply) => {
    if (!isUuid(param(req))) return badId(reply);
    const s = await view.shelves(req.caller!.user_id, param(req));
    return s ? reply.send({ device_id: param(req).toLowerCase(), shelves: s }) : sendFailure(reply, fail('not_found', M.deviceNotFound));
  });
  app.post(
    '/api/devices/:id/shelves',
    s('put a collection on a device (201 when new)', { params: IdParams, body: ShelfBody, response: { 200: ShelfAdded, 201: ShelfAdded, ...refused } }),
    async (req, reply) => {
      const cid = (req.body as { collection_id?: unknown }).collection_id;
      if (cid === undefined || cid === null || cid === '') return sendFailure(reply, fail('validation', M.collectionIdRequired));
      if (!isUuid(cid)) return sendFailure(reply, fail('validation', M.invalidCollectionId));
      if (!isUuid(param(req))) return badId(reply);
      const c = await view.collection(req.caller!.user_id, cid.toLowerCase());
      if (!c) return sendFailure(reply, fail('not_found', M.collectionNotFound));
      const r = await devices('shelf-add', { ...caller(req), id: param(req), input: { collection_id: cid, collection_name: c.name } });
      return sendResult(reply, r, r.ok && r.value.message === 'shelf added' ? 201 : 200);
    },
  );
  const shelfParams = params({ id: 'the device', collection_id: 'the collection' });
  app.delete('/api/devices/:id/shelves/:collection_id', s('take a shelf off a device', { params: shelfParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('shelf-remove', { ...caller(req), id: param(req), input: { collection_id: param(req, 'collection_id') } })),
  );
  app.delete('/api/devices/:id/shelves', s("clear a device's shelves", { params: IdParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('shelves-clear', { ...caller(req), id: param(req) })),
  );

  // the sync queue
  const qt = { tags: ['sync queue'] };
  const queueQuery = query({ status: 'pending or failed', limit: 'how many', offset: 'how many to skip' });
  app.get('/api/sync-queue/stats', s('your sync queue per device', { ...qt, response: { 200: QueueStats, ...errors(...SIGNED_IN) } }), async (req, reply) =>
    sendResult(reply, await devices('queue-stats', caller(req))),
  );
  app.get('/api/sync-queue', s('your sync queue', { ...qt, querystring: queueQuery, response: { 200: QueueList, ...errors(400, ...SIGNED_IN) } }), async (req, reply) =>
    sendResult(reply, await visibleQueue(reads, req.caller!, await devices('queue-all', { ...caller(req), query: queryOf(req) }))),
  );
  app.post('/api/sync-queue/:id/retry', s('retry a failed entry', { ...qt, params: IdParams, response: { 200: QueueEntry, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('queue-retry', { ...caller(req), id: param(req) })),
  );
  app.delete('/api/sync-queue/:id', s('delete an entry', { ...qt, params: IdParams, response: { 200: MessageBody, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('queue-delete', { ...caller(req), id: param(req) })),
  );
  app.get('/api/devices/:id/queue', s("a device's queue", { ...qt, params: IdParams, querystring: queueQuery, response: { 200: QueueList, ...refused } }), async (req, reply) =>
    sendResult(reply, await visibleQueue(reads, req.caller!, await devices('queue-list', { ...caller(req), id: param(req), query: queryOf(req) }))),
  );
  app.delete('/api/devices/:id/queue', s("clear a device's queue", { ...qt, params: IdParams, response: { 200: QueueCleared, ...refused } }), async (req, reply) =>
    sendResult(reply, await devices('queue-clear', { ...caller(req), id: param(req) })),
  );

  // the sidecar: the device itself (its credential) or its owner (session) may fetch it
  const sidecar = (download: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const id = param(req);
    if (!isUuid(id)) return badId(reply);
    let owner: string;
    if (deviceCredentialOf(req) !== null) {
      await deviceAuth.requireDevice(req, reply);
      if (reply.sent) return reply;
      const d = req.device!;
      if (d.device_id !== id.toLowerCase()) return sendFailure(reply, fail('not_found', M.deviceNotFound));
      owner = d.user_id;
      req.caller = deviceAuth.callerOf(d);
    } else {
      await auth.requireUser(req, reply);
      if (reply.sent) return reply;
      owner = req.caller!.user_id;
    }
    const body = await view.sidecar(req.caller!, owner, id.toLowerCase());
    if (!body) return sendFailure(reply, fail('not_found', M.deviceNotFound));
    reply.header('Cache-Control', 'no-store').type('application/json; charset=utf-8');
    if (download) reply.header('Content-Disposition', `attachment; filename="bindery-sidecar-${id.toLowerCase()}.json"`);
    return reply.send(JSON.stringify(body, null, download ? 2 : 0));
  };
  const sidecarSchema = (summary: string) => ({
    schema: {
      tags,
      summary,
      security: [{ bearer: [] }] as Record<string, string[]>[],
      params: IdParams,
      response: { 200: content('application/json', 'the sidecar', Sidecar), ...refused },
    },
  });
  app.get('/api/devices/:id/sidecar', sidecarSchema("a device's sidecar (its own credential, or its owner's session)"), sidecar(false));
  app.get('/api/devices/:id/sidecar/download', sidecarSchema('the sidecar as a file to save'), sidecar(true));
}
