// Request/reply to services; a missing or silent service becomes 503, never a crash.
import { fail, Messages, type Identity, type Result } from '@bindery/contracts';
import { RpcUnavailableError, type Bus, type Logger } from '@bindery/platform';
import { rpcSubject } from '@bindery/contracts';

export type CallIdentity = <K extends Identity.IdentityOp>(op: K, body: Identity.IdentityRequest<K>) => Promise<Result<unknown>>;

export function identityClient(bus: Bus, log: Logger, timeoutMs: number): CallIdentity {
  return async (op, body) => {
    try {
      const r = (await bus.request(rpcSubject('identity', op), body, timeoutMs)) as Result<unknown> | null;
      if (!r || typeof r !== 'object' || typeof (r as { ok?: unknown }).ok !== 'boolean') return { ok: false, error: fail('internal', Messages.internal) };
      return r;
    } catch (e) {
      if (e instanceof RpcUnavailableError) {
        log.warn({ op, err: e.message }, 'identity unavailable');
        return { ok: false, error: fail('service_unavailable', Messages.serviceUnavailable) };
      }
      throw e;
    }
  };
}
