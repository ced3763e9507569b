// The request/reply endpoints: each request is checked against its contract schema, then handled.
import { Compile } from 'typebox/compile';
import { err, fail, Messages, Reading, type Result } from '@bindery/contracts';
import type { RpcHandler } from '@bindery/platform';
import type { Ctx } from './context';
import * as progress from './progress';
import { usageCounts } from './usage';
import type { Req } from './util';

type Handler = (ctx: Ctx, req: Req) => Promise<Result<unknown>>;

export const handlers: Partial<Record<(typeof Reading.ReadingOps)[number], Handler>> = {
  'progress-get': progress.getProgress,
  'progress-put': progress.putProgress,
  'progress-delete': progress.deleteProgress,
  'progress-history': progress.history,
  'progress-item': progress.progressItem,
};

export function endpoints(ctx: Ctx, extra: Partial<Record<string, Handler>> = {}): Record<string, RpcHandler> {
  const out: Record<string, RpcHandler> = {};
  const check = Compile(Reading.ReadingRequest);
  for (const [op, h] of Object.entries({ ...handlers, ...extra })) {
    out[op] = async (body) => {
      if (!check.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
      return h!(ctx, body as Req);
    };
  }
  const usage = Compile(Reading.UsageCountsRequest);
  out['usage-counts'] = async (body) => {
    if (!usage.Check(body)) return err(fail('invalid_request', Messages.invalidRequest));
    return usageCounts(ctx, body);
  };
  return out;
}
