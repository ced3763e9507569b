// Device-authenticated routes of device-sync itself: who am I, and my sync queue (take and acknowledge).
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { DeviceAuth } from '../http/device-auth';
import type { CallDeviceSync } from '../http/device-sync-client';
import { sendResult } from '../http/reply';
import { visibleQueue } from '../read-model/device-view';
import type { Reads } from '../read-model/reads';
import { errors } from '../http/schemas';
import { Acked, QueueList, Whoami } from './device-schemas';

const AckBody = Type.Object({
  done: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1000 })),
  failed: Type.Optional(Type.Array(Type.Object({ id: Type.String({ maxLength: 64 }), error: Type.Optional(Type.String({ maxLength: 500 })) }), { maxItems: 1000 })),
});

const tags = ['device sync'];
const refused = errors(400, 401, 403);

export function deviceSyncRoutes(app: FastifyInstance, { deviceAuth, devices, reads }: { deviceAuth: DeviceAuth; devices: CallDeviceSync; reads: Reads }): void {
  const device = { onRequest: deviceAuth.requireDevice };
  app.get('/api/sync/device', { ...device, schema: { tags, summary: 'the calling device', response: { 200: Whoami, ...refused } } }, async (req) => {
    const d = req.device!;
    return { device_id: d.device_id, user_id: d.user_id, name: d.name };
  });
  app.get('/api/sync/queue', { ...device, schema: { tags, summary: "the calling device's pending entries", response: { 200: QueueList, ...refused } } }, async (req, reply) =>
    sendResult(
      reply,
      await visibleQueue(
        reads,
        deviceAuth.callerOf(req.device!),
        await devices('queue-list', { device: deviceAuth.deviceOf(req.device!), id: req.device!.device_id, query: { status: 'pending' } }),
      ),
    ),
  );
  app.post(
    '/api/sync/queue/ack',
    { ...device, schema: { tags, summary: 'acknowledge entries done or failed', body: AckBody, response: { 200: Acked, ...refused } } },
    async (req, reply) => sendResult(reply, await devices('queue-ack', { device: deviceAuth.deviceOf(req.device!), input: req.body as Record<string, unknown> })),
  );
}
