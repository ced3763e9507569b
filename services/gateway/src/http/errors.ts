// Every error fastify or a plugin raises becomes `{error: <message>}`: its own bodies
// (`FST_ERR_*`, `statusCode`, `message`) never reach a client.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { fail, Messages, type Failure } from '@bindery/contracts';
import { HttpFailure } from './failure';
import { isFragment, sendFailure } from './reply';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** the failure for a path parameter its schema refuses (default: `invalid request`) */
    paramsFailure?: Failure;
  }
}

const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
const DRAIN_MAX_MS = 5000;

/** Discards what is left of a request body, up to a size and time bound; past either, gives up. */
function drain(raw: IncomingMessage, maxBytes: number, maxMs: number): Promise<void> {
  const declared = Number(raw.headers['content-length'] ?? NaN);
  if (raw.readableEnded || raw.destroyed || (Number.isFinite(declared) && declared > maxBytes)) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    raw.on('data', onData).once('end', done).once('close', done).once('error', done);
    raw.resume();
  });
}

export function errorHandler(e: FastifyError, req: FastifyRequest, reply: FastifyReply) {
  // Body errors on routes whose failures are fragments (register, login) are fragments too.
  const frag = isFragment(req) && req.routeOptions.config?.fragmentErrors === true;
  if (e instanceof HttpFailure) return sendFailure(reply, e.failure, frag);
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    // Read the rest of a moderately oversized body first: answering while the client still
    // writes makes Node close the connection, and the client sees a broken pipe, not the 413.
    return drain(req.raw, DRAIN_MAX_BYTES, DRAIN_MAX_MS).then(() => {
      // fastify marks parse failures `connection: close` in case more data follows; none does now
      if (req.raw.readableEnded) reply.removeHeader('connection');
      return sendFailure(reply, fail('payload_too_large', Messages.payloadTooLarge), frag);
    });
  }
  // A route schema refused the request: the spec's messages, not the validator's.
  if (e.validation) {
    const p = e.validationContext === 'params' ? req.routeOptions.config?.paramsFailure : undefined;
    return sendFailure(reply, p ?? fail('invalid_request', Messages.invalidRequest), frag);
  }
  // Unbindable bodies (malformed JSON, an unsupported content type) are the spec's `invalid request`.
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) return sendFailure(reply, fail('invalid_request', Messages.invalidRequest), frag);
  req.log.error({ err: e, url: req.url }, 'request failed');
  return sendFailure(reply, fail('internal', Messages.internal));
}

/** Errors fastify meets before a route is found (a malformed percent-encoding, an overlong parameter). */
export function frameworkErrors(e: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
  if (e.code === 'FST_ERR_BAD_URL') return sendFailure(reply, fail('invalid_request', Messages.malformedUrl));
  if (e.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendFailure(reply, fail('not_found', Messages.notFound));
  return sendFailure(reply, fail('internal', Messages.internal));
}

/** A request Node's HTTP parser refused: answered on the socket, in our shape. */
export function clientErrorHandler(e: NodeJS.ErrnoException, socket: Socket): void {
  if (e.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, message] =
    e.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', Messages.requestTimeout]
      : e.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', Messages.headersTooLarge]
        : [400, 'Bad Request', Messages.badRequest];
  const body = JSON.stringify({ error: message });
  if (socket.writable)
    socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(e);
}
