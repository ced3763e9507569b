// /api/auth/opds-key: the caller's own reader key, for reader apps that drop credentials on image
// and download requests. POST makes a new one (the old stops working) and shows it once, with the
// catalog address that carries it; GET says whether one exists; DELETE revokes it.
import type { FastifyInstance } from 'fastify';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import type { VerifiedCache } from '../http/verified-cache';
import type { Origins } from '../http/origin';
import { sendFailure } from '../http/reply';
import { OPDS_ROOT } from '../opds/request';
import { errors, MessageBody, SIGNED_IN } from '../http/schemas';
import { KeyState, NewKey } from '@bindery/contracts/api/auth';

export function opdsKeyRoutes(
  app: FastifyInstance,
  { auth, identity, verified, origins }: { auth: Auth; identity: CallIdentity; verified?: VerifiedCache; origins: Origins },
): void {
  const user = { onRequest: auth.requireUser };
  const tags = ['opds'];
  app.get('/api/auth/opds-key', { ...user, schema: { tags, summary: 'your reader key', response: { 200: KeyState, ...errors(...SIGNED_IN) } } }, async (req, reply) => {
    const r = await identity('reader-key', { caller: req.caller!, action: 'get' });
    return r.ok ? reply.send(r.value) : sendFailure(reply, r.error);
  });
  app.post(
    '/api/auth/opds-key',
    { ...user, schema: { tags, summary: 'a new reader key (the old one stops working)', response: { 201: NewKey, ...errors(...SIGNED_IN) } } },
    async (req, reply) => {
      const r = await identity('reader-key', { caller: req.caller!, action: 'create' });
      if (!r.ok) return sendFailure(reply, r.error);
      // the old key stops here at once (other replicas drop it on identity's event)
      verified?.forgetUser(req.caller!.user_id);
      const v = r.value;
      const path = `${OPDS_ROOT}/key/${encodeURIComponent(v.key!)}`;
      // the absolute address only for a Host this server may believe (else the app takes the path)
      const base = origins.publicBase(req);
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send({ key: v.key, created_at: v.created_at, opds_path: path, ...(base ? { opds_url: `${base}${path}` } : {}) });
    },
  );
  app.delete(
    '/api/auth/opds-key',
    { ...user, schema: { tags, summary: 'revoke your reader key', response: { 200: MessageBody, ...errors(...SIGNED_IN) } } },
    async (req, reply) => {
      const r = await identity('reader-key', { caller: req.caller!, action: 'revoke' });
      if (r.ok) verified?.forgetUser(req.caller!.user_id);
      return r.ok ? reply.send({ message: 'opds key revoked' }) : sendFailure(reply, r.error);
    },
  );
}
