// Request/reply to the reading service, with read-your-writes like the other clients, and the
// check every reading route makes first: the caller may see the item (else it does not exist).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail, isUuid, Messages, type Reading, type Result, rpcSubject, type RpcCall } from '@bindery/contracts';
import { RpcUnavailableError, type Bus, type Logger, type Written } from '@bindery/platform';
import type { Reads } from '../read-model/reads';
import type { AfterWrite } from './rpc';
import { sendFailure } from './reply';

/** Reading's client on the bus, typed from its operations: `call(op, request)` answers that operation's result. */
export type CallReading = RpcCall<Reading.ReadingOperations>;
/** An operation a route asks of reading for its caller (all but the gateway's own `usage-counts`). */
export type ReaderOp = Exclude<Reading.ReadingOp, 'usage-counts'>;
/** A reading request as a route writes it: the client adds the caller and the device it came through. */
export type ReaderBody<K extends ReaderOp> = Omit<Reading.ReadingRequest<K>, 'caller' | 'device'>;
/** Reading's client for a route: the request's caller (and device) added, the operation's result answered. */
export type Reader = <K extends ReaderOp>(req: FastifyRequest, op: K, body: ReaderBody<K>) => Promise<Result<Reading.ReadingResult<K>>>;

/**
 * Reading's client. The one cast of reading's answers is here: reading's handlers are typed to
 * answer each operation's result schema (contracts' ReadingOperations), so the bus carries that shape.
 */
export function readingClient(bus: Bus, log: Logger, timeoutMs: number, afterWrite?: AfterWrite): Reader {
  const reader = async (req: FastifyRequest, op: ReaderOp, body: object): Promise<Result<unknown>> => {
    try {
      // a device credential names the device: what it writes is known as its own (the sync queue skips it)
      const device = req.device ? { device: { device_id: req.device.device_id, name: req.device.name } } : {};
      const r = (await bus.request(rpcSubject('reading', op), { caller: req.caller!, ...device, ...body }, timeoutMs)) as (Result<unknown> & { written?: Written }) | null;
      if (!r || typeof r !== 'object' || typeof (r as { ok?: unknown }).ok !== 'boolean') return { ok: false, error: fail('internal', Messages.internal) };
      if (r.written && afterWrite) await afterWrite(r.written.source, r.written.position, r.written.events);
      return r;
    } catch (e) {
      if (e instanceof RpcUnavailableError) {
        log.warn({ op, err: e.message }, 'reading unavailable');
        return { ok: false, error: fail('service_unavailable', Messages.serviceUnavailable) };
      }
      throw e;
    }
  };
  return reader as Reader;
}

/**
 * The item id of the route, lower-cased, when the caller may see the item; otherwise the failure
 * is sent (400 for a malformed id, 404 for an item that is absent or in a library they can't see).
 */
export async function visibleItem(reads: Reads, req: FastifyRequest, reply: FastifyReply, id: string): Promise<string | null> {
  if (!isUuid(id)) {
    sendFailure(reply, fail('validation', Messages.invalidMediaItemId));
    return null;
  }
  const c = await reads.context(req.caller!);
  if (!(await reads.catalog.itemLibrary(c.access, id))) {
    sendFailure(reply, fail('not_found', Messages.mediaItemNotFound));
    return null;
  }
  return id.toLowerCase();
}
