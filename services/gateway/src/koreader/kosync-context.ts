// What every kosync route group shares, built once per app: the dependencies, the documents view,
// the protocol's sign-in, and the count of pushes answered here (part of a pull's cache key).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Auth } from '../http/authenticate';
import type { Reader } from '../http/reading-client';
import type { Access } from '../read-model/access';
import { KosyncView } from '../read-model/kosync-view';
import type { Reads } from '../read-model/reads';
import { type KosyncSignInDeps, kosyncSignIn } from './kosync-sign-in';

export interface KosyncDeps extends KosyncSignInDeps {
  auth: Auth;
  reads: Reads;
  reading: Reader;
  /** the reading client for the protocol's push: it waits for no read model (a pull after it is a new cache key) */
  pushReading?: Reader;
  /** users/create carries the per-address request limit of register */
  createLimited?: boolean;
}

export interface KosyncContext extends Required<KosyncDeps> {
  view: KosyncView;
  /** the route options of the protocol's signed-in routes */
  signed: { onRequest: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> };
  access: (req: FastifyRequest) => Promise<Access>;
  /** pushes answered by this gateway: part of a pull's cache key */
  pushes: { count: number };
}

export function kosyncContext(app: FastifyInstance, deps: KosyncDeps): KosyncContext {
  const { reads, reading, pushReading = reading, createLimited = false } = deps;
  const view = new KosyncView(reads.db);
  const signed = { onRequest: kosyncSignIn(app, deps) };
  const access = async (req: FastifyRequest) => (await reads.context(req.caller!)).access;
  return { ...deps, pushReading, createLimited, view, signed, access, pushes: { count: 0 } };
}
