// A service's request/reply endpoints from its operations map (contracts' Operations): each request
// is checked once against its operation's schema, then screened (a service's own rule for every
// request, such as refusing unsafe text), then handed to the operation's handler, typed to answer
// the operation's result.
import { Compile } from 'typebox/compile';
import { err, fail, Messages, type Failure, type Operations, type RequestOf, type Result, type RpcHandlers } from '@bindery/contracts';
import type { RpcHandler } from './bus/types';

/** The check of one operation's request: null when it fits its schema, else the failure a caller gets. */
export type RequestCheck = (body: unknown) => Failure | null;

/** The request checks of every operation: invalid_request ("invalid request body") when the schema refuses it. */
export function requestChecks<M extends Operations>(ops: M): { [K in keyof M]: RequestCheck } {
  const out: Record<string, RequestCheck> = {};
  for (const [name, o] of Object.entries(ops)) {
    // compiled on the operation's first request, not at start-up (a service has up to 50)
    let check: ReturnType<typeof Compile> | null = null;
    out[name] = (body) => {
      check ??= Compile(o.request);
      return check.Check(body) ? null : fail('invalid_request', Messages.invalidRequest);
    };
  }
  return out as { [K in keyof M]: RequestCheck };
}

/**
 * The endpoints of a service: one per operation of `ops`, each checking its request against the
 * operation's schema, then `screen` (for a checked request), then calling its handler with `ctx`.
 */
export function operationEndpoints<M extends Operations, Ctx>(
  ops: M,
  handlers: RpcHandlers<M, Ctx>,
  ctx: Ctx,
  screen: (body: RequestOf<M, keyof M>) => Failure | null = () => null,
): Record<string, RpcHandler> {
  const checks = requestChecks(ops);
  const out: Record<string, RpcHandler> = {};
  for (const name of Object.keys(ops) as (keyof M & string)[]) {
    const check = checks[name];
    const handle = handlers[name] as (ctx: Ctx, req: unknown) => Promise<Result<unknown>>;
    out[name] = async (body) => {
      const refused = check(body) ?? screen(body as RequestOf<M, keyof M>);
      return refused ? err(refused) : handle(ctx, body);
    };
  }
  return out;
}
