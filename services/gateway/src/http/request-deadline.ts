// The whole-request deadline (HTTP_REQUEST_TIMEOUT_SECONDS), kept per request instead of by Node's
// server-wide `requestTimeout`, so that one route may lift it once it has judged the caller: a book
// upload's body is hundreds of MB and takes as long as the link needs, held to a pace instead
// (web-api/library-uploads.ts). Every other request, and an upload refused before its body is read
// (a bad token, a bad name), must arrive whole within `requestMs` of its headers, or it is answered
// 408 and its connection closed, as Node's own timer did.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientErrorHandler } from './errors';

const lift = new WeakMap<IncomingMessage, () => void>();

export function requestDeadline(requestMs: number) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const raw = req.raw;
    // a request made in process (the web pages' own API calls, light-my-request) has no socket to cut
    if (raw.complete || req.headers.upgrade || typeof raw.socket?.destroy !== 'function') return;
    const timer = setTimeout(() => {
      if (raw.complete) return;
      // an answer already begun is not followed by a 408: the connection is cut
      if (reply.raw.headersSent) return void raw.socket.destroy();
      clientErrorHandler(Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), raw.socket);
    }, requestMs);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      lift.delete(raw);
    };
    lift.set(raw, done);
    raw.once('end', done);
    raw.once('close', done);
  };
}

/** Lifts the request's deadline: the route keeps its own from here on. */
export const liftDeadline = (req: FastifyRequest): void => lift.get(req.raw)?.();
