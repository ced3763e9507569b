// Request/reply to services; a missing or silent service becomes 503, never a crash.
import { fail, Messages, rpcSubject, type Catalog, type Identity, type Operations, type RequestOf, type Result, type ResultOf, type RpcCall } from '@bindery/contracts';
import { RpcUnavailableError, type Bus, type Logger, type Written } from '@bindery/platform';

/** Identity's client, typed from its operations: `call(op, request)` answers that operation's result. */
export type CallIdentity = RpcCall<Identity.IdentityOperations>;
/** The catalog's client, typed from its operations the same way. */
export type CallCatalog = RpcCall<Catalog.CatalogOperations>;
/** A call to a service that may not be deployed yet, typed from its operations: null when nobody answers. */
export type CallOptional<M extends Operations> = <K extends keyof M & string>(op: K, body: RequestOf<M, K>) => Promise<Result<ResultOf<M, K>> | null>;

/**
 * Runs after a write that appended events, with the source and log position it reached, and the
 * events themselves when the service carries them (written.events).
 */
export type AfterWrite = (source: string, position: number, events?: Written['events']) => Promise<void>;

/** A request/reply client of one service: its answer, or 503 when nobody answers; writes wait for the read models. */
export function client(bus: Bus, log: Logger, timeoutMs: number, service: string, afterWrite?: AfterWrite) {
  return async (op: string, body: unknown): Promise<Result<unknown>> => {
    try {
      const r = (await bus.request(rpcSubject(service, op), body, timeoutMs)) as (Result<unknown> & { written?: Written }) | null;
      if (!r || typeof r !== 'object' || typeof (r as { ok?: unknown }).ok !== 'boolean') return { ok: false, error: fail('internal', Messages.internal) };
      if (r.written && afterWrite) await afterWrite(r.written.source, r.written.position, r.written.events);
      return r;
    } catch (e) {
      if (e instanceof RpcUnavailableError) {
        log.warn({ service, op, err: e.message }, `${service} unavailable`);
        return { ok: false, error: fail('service_unavailable', Messages.serviceUnavailable) };
      }
      throw e;
    }
  };
}

/**
 * Identity's client. The one cast of its answers is here: identity's handlers are typed to answer
 * each operation's result schema (contracts' IdentityOperations), so the bus carries that shape.
 */
export function identityClient(bus: Bus, log: Logger, timeoutMs: number, afterWrite?: AfterWrite): CallIdentity {
  return client(bus, log, timeoutMs, 'identity', afterWrite) as CallIdentity;
}

/**
 * The catalog's client; as with identity's, the one cast of its answers is here (contracts'
 * CatalogOperations types the catalog's handlers).
 */
export function catalogClient(bus: Bus, log: Logger, timeoutMs: number, afterWrite?: AfterWrite): CallCatalog {
  return client(bus, log, timeoutMs, 'catalog', afterWrite) as CallCatalog;
}

/**
 * The client of a service that may not be deployed yet. The one cast of its answers is here: the
 * service's handlers are typed to answer each operation's result schema (its `M`).
 */
export function optionalClient<M extends Operations>(bus: Bus, timeoutMs: number, service: string): CallOptional<M> {
  return async (op, body) => {
    try {
      return (await bus.request(rpcSubject(service, op), body, timeoutMs)) as Result<ResultOf<M, typeof op>>;
    } catch (e) {
      if (e instanceof RpcUnavailableError) return null;
      throw e;
    }
  };
}
