// /api/admin/parked-events: events a consumer set aside after its handler kept failing, across
// every service, and their replay. Admin only.
import type { FastifyInstance } from 'fastify';
import { err, fail, rpcSubject, type Result } from '@bindery/contracts';
import { ParkingMessages, RpcUnavailableError, type Bus, type ParkedEvent, type ParkingLot } from '@bindery/platform';
import type { Auth } from '../http/authenticate';
import { sendFailure, sendResult } from '../http/reply';
import Type from 'typebox';
import { errors, params, SIGNED_IN } from '../http/schemas';

/** Services that serve `parked-list` / `parked-replay` over the bus; the gateway's own parking is local. */
const REMOTE = ['identity', 'catalog'] as const;

export interface AdminOpsDeps {
  auth: Auth;
  bus: Bus;
  rpcTimeoutMs: number;
  /** the gateway's own parking (its read-model consumers) */
  parking?: ParkingLot;
}

const Parked = Type.Object(
  { parked_events: Type.Array(Type.Object({ id: Type.String(), parked_at: Type.String() })), services_unavailable: Type.Array(Type.String()) },
  { description: "events consumers set aside, every service's" },
);

export function adminOpsRoutes(app: FastifyInstance, d: AdminOpsDeps): void {
  const admin = { onRequest: d.auth.requireAdmin };
  const call = async (service: string, op: string, body: unknown): Promise<Result<unknown> | null> => {
    try {
      return (await d.bus.request(rpcSubject(service, op), body, d.rpcTimeoutMs)) as Result<unknown>;
    } catch (e) {
      if (e instanceof RpcUnavailableError) return null;
      throw e;
    }
  };

  const tags = ['admin'];
  app.get('/api/admin/parked-events', { ...admin, schema: { tags, summary: 'parked events', response: { 200: Parked, ...errors(...SIGNED_IN) } } }, async (_req, reply) => {
    const parked: ParkedEvent[] = d.parking ? await d.parking.list() : [];
    const unavailable: string[] = [];
    const answers = await Promise.all(REMOTE.map(async (s) => [s, await call(s, 'parked-list', {})] as const));
    for (const [service, r] of answers) {
      if (r?.ok && Array.isArray(r.value)) parked.push(...(r.value as ParkedEvent[]));
      else unavailable.push(service);
    }
    parked.sort((a, b) => a.parked_at.localeCompare(b.parked_at) || a.id.localeCompare(b.id));
    return reply.send({ parked_events: parked, services_unavailable: unavailable });
  });

  const replaySchema = {
    tags,
    summary: 'replay a parked event',
    params: params({ id: '<service>-<n>' }),
    response: { 200: Type.Unknown({ description: 'what the owning service answers' }), ...errors(400, ...SIGNED_IN, 404, 503) },
  };
  app.post<{ Params: { id: string } }>('/api/admin/parked-events/:id/replay', { ...admin, schema: replaySchema }, async (req, reply) => {
    const id = req.params.id;
    const service = /^([a-z_][a-z0-9_]*)-[1-9][0-9]{0,15}$/.exec(id)?.[1];
    if (!service) return sendFailure(reply, fail('invalid_request', ParkingMessages.invalidId));
    if (d.parking && service === d.parking.service) return sendResult(reply, await d.parking.replay(id));
    if (!(REMOTE as readonly string[]).includes(service)) return sendFailure(reply, fail('not_found', ParkingMessages.notFound));
    const r = await call(service, 'parked-replay', { id });
    if (!r) return sendFailure(reply, fail('service_unavailable', 'service unavailable'));
    return sendResult(reply, r.ok ? r : err(r.error));
  });
}
