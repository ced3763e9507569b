import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** What a unit of work carries from the HTTP request that caused it: the gateway sets it, the bus passes it on. */
export interface RequestContext {
  requestId: string;
  /** set by the gateway for the HTTP request in flight: told of each write it waited for (read your writes) */
  onWritten?: ((source: string, position: number) => void) | undefined;
}

const requestContext = new AsyncLocalStorage<RequestContext>();

export const REQUEST_ID_HEADER = 'x-request-id';

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** The unit of work in progress, if any (the same object for its whole life: fields set on it stay). */
export function currentRequestContext(): RequestContext | undefined {
  return requestContext.getStore();
}

/** Runs `fn` inside `ctx` (enters an existing context again, e.g. after a stream callback lost it). */
export function withRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return requestContext.run(ctx, fn);
}

/** Runs `fn` with `requestId` attached to every log line it writes (and every request it sends over the bus). */
export function withRequestId<T>(requestId: string | undefined, fn: () => T): T {
  return requestId ? requestContext.run({ requestId }, fn) : fn();
}

const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** A caller's request id when it is a sane token; a new one otherwise (never echo control bytes or megabytes). */
export function acceptRequestId(given: unknown): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

export interface LoggerOptions {
  /**
   * Rewrites each line, as written (JSON: message, fields, an error's stack), before it leaves the
   * process: the caller's secrets out of it. Children of the logger share it.
   */
  scrub?: (line: string) => string;
  /** where lines go (default: stdout, pretty on a terminal) */
  destination?: DestinationStream;
}

export function createLogger(name: string, level = process.env.LOG_LEVEL ?? 'info', opts: LoggerOptions = {}): Logger {
  const pretty = !opts.destination && process.stdout.isTTY && process.env.NODE_ENV !== 'production';
  const options = {
    name,
    level,
    // Every logger, and every child of it, stamps the current request id: handler code need not pass it around.
    mixin: () => {
      const id = requestContext.getStore()?.requestId;
      return id ? { requestId: id } : {};
    },
    ...(opts.scrub ? { hooks: { streamWrite: opts.scrub } } : {}),
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } } : {}),
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
