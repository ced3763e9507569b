// Typed RPC: a service's operations as a map from name to { request, result } TypeBox schemas. The
// service checks a request once against its schema (platform's operationEndpoints) and its handlers
// are typed to answer the result; the gateway's client is typed from the same map, so a call's
// answer needs no cast. Identity's map is Identity.IdentityOperations; catalog, reading and
// device-sync follow the same shape.
import type Type from 'typebox';
import type { Result } from './errors';

/** One operation: what a caller sends and what the service answers on success. */
export interface Operation<Req extends Type.TSchema = Type.TSchema, Res extends Type.TSchema = Type.TSchema> {
  request: Req;
  result: Res;
}

/** A service's operations by name. */
export type Operations = Record<string, Operation>;

/** An operation from its request and result schemas (keeps both schemas' own types). */
export const operation = <Req extends Type.TSchema, Res extends Type.TSchema>(request: Req, result: Res): Operation<Req, Res> => ({ request, result });

/**
 * A service's operations from its map of request schemas and its map of result schemas (the same
 * names: a name missing from either map does not type-check).
 */
export function operations<Req extends Record<string, Type.TSchema>, Res extends { [K in keyof Req]: Type.TSchema }>(
  requests: Req,
  results: Res,
): { [K in keyof Req]: Operation<Req[K], Res[K]> } {
  const out: Record<string, Operation> = {};
  for (const name of Object.keys(requests)) out[name] = { request: requests[name]!, result: results[name]! };
  return out as { [K in keyof Req]: Operation<Req[K], Res[K]> };
}

/** The request of operation K, as its schema states it. */
export type RequestOf<M extends Operations, K extends keyof M> = Type.Static<M[K]['request']>;
/** The result of operation K on success, as its schema states it. */
export type ResultOf<M extends Operations, K extends keyof M> = Type.Static<M[K]['result']>;

/** A client of a service: `call(op, request)` answers that operation's result. */
export type RpcCall<M extends Operations> = <K extends keyof M & string>(op: K, body: RequestOf<M, K>) => Promise<Result<ResultOf<M, K>>>;

/** A service's handlers: one per operation, taking its checked request and answering its result. */
export type RpcHandlers<M extends Operations, Ctx> = { [K in keyof M]: (ctx: Ctx, req: RequestOf<M, K>) => Promise<Result<ResultOf<M, K>>> };
