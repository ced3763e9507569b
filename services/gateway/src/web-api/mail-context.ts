// What the mail route groups share, built once per registration: the deps, the 503 of every route
// but the status when mail is off, and the answers of a refused mail and of a success.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fail } from '@bindery/contracts';
import type { Logger, Mailer } from '@bindery/platform';
import type { Auth } from '../http/authenticate';
import type { CallIdentity } from '../http/rpc';
import type { Origins } from '../http/origin';
import type { Reads } from '../read-model/reads';
import { escapeHtml, isFragment, sendFailure, sendFragment } from '../http/reply';
import type { CookiePolicy } from '../http/session-cookie';
import type { SendWorker } from '../mail/sends';

export const MAIL_NOT_CONFIGURED = 'mail is not configured';
export const NO_LINK_BASE = 'this server does not know its public address: set PUBLIC_URL to send links';

export interface MailDeps {
  mailer: Mailer | null;
  call: CallIdentity;
  auth: Auth;
  reads: Reads;
  origins: Origins;
  cookie: CookiePolicy;
  log: Logger;
  /** reset requests carry the per-client-address limit of login and register */
  rateLimited: boolean;
  /** mails the books people send to their e-readers (null when mail is off) */
  sends: SendWorker | null;
}

export type MailContext = ReturnType<typeof mailContext>;

export function mailContext(d: MailDeps) {
  const { mailer } = d;
  const limited = d.rateLimited ? { rateLimit: {} } : {};
  const unconfigured = (req: FastifyRequest, reply: FastifyReply) => sendFailure(reply, fail('service_unavailable', MAIL_NOT_CONFIGURED), isFragment(req));
  /** onRequest of every mail route but the status: 503 before anything else when mail is off */
  const needsMail = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!mailer) return unconfigured(req, reply);
  };
  const refusedBy = (reply: FastifyReply, req: FastifyRequest, said: string) => {
    const message = `the mail server refused the message: ${said}`;
    if (isFragment(req))
      return reply
        .code(502)
        .type('text/html; charset=utf-8')
        .send(`<div class="alert alert-error" role="alert">${escapeHtml(message)}</div>`);
    return reply.code(502).send({ error: message });
  };
  const ok = (req: FastifyRequest, reply: FastifyReply, status: number, body: Record<string, unknown> & { message: string }, redirect?: string) =>
    isFragment(req) ? sendFragment(reply, status, `<div class="alert alert-success" role="status">${escapeHtml(body.message)}</div>`, redirect) : reply.code(status).send(body);
  return { ...d, tags: ['mail'], limited, needsMail, refusedBy, ok };
}
