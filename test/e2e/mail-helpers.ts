// A real SMTP server in the test's process (smtp-server), whose messages are parsed with mailparser:
// what Bindery mails is read back as a mail client would read it.
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface Received {
  to: string[];
  mail: ParsedMail;
}

export interface MailServer {
  /** SMTP_URL and MAIL_FROM for a Bindery that mails here */
  env: Record<string, string>;
  received: Received[];
  /** the next message to `to` (already received or still to come) */
  next(to: string, timeoutMs?: number): Promise<Received>;
  /** every message to `to` so far */
  to(to: string): Received[];
  stop(): Promise<void>;
}

export const USER = 'bindery';
export const PASS = 'smtp-secret-1';
/** recipients at this domain are refused with a permanent 550 */
export const REFUSING_DOMAIN = 'refused.example';
/** recipients at this domain are put off with a transient 451 (try again later) */
export const LATER_DOMAIN = 'later.example';

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function startMailServer(): Promise<MailServer> {
  const received: Received[] = [];
  const waiters: { to: string; seen: number; resolve: (r: Received) => void }[] = [];
  const forTo = (to: string) => received.filter((r) => r.to.includes(to.toLowerCase()));
  const server = new SMTPServer({
    // plain SMTP on a loopback port: no STARTTLS (its self-signed certificate would be refused), auth required
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    size: 200 * 1024 * 1024,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASS) return cb(null, { user: USER });
      return cb(new Error('invalid credentials'));
    },
    onRcptTo(address, _session, cb) {
      if (address.address.toLowerCase().endsWith(`@${REFUSING_DOMAIN}`)) {
        const e = new Error('mailbox unavailable: refused by policy') as Error & { responseCode: number };
        e.responseCode = 550;
        return cb(e);
      }
      if (address.address.toLowerCase().endsWith(`@${LATER_DOMAIN}`)) {
        const e = new Error('greylisted: try again later') as Error & { responseCode: number };
        e.responseCode = 451;
        return cb(e);
      }
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (mail) => {
          const r = { to: session.envelope.rcptTo.map((a) => a.address.toLowerCase()), mail };
          received.push(r);
          for (const w of [...waiters]) {
            if (r.to.includes(w.to) && forTo(w.to).length > w.seen) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(forTo(w.to)[w.seen]!);
            }
          }
          cb();
        },
        (e: Error) => cb(e),
      );
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  const consumed = new Map<string, number>();
  return {
    env: { SMTP_URL: `smtp://${USER}:${PASS}@127.0.0.1:${port}`, MAIL_FROM: 'Bindery <books@bindery.test>' },
    received,
    to: forTo,
    next(to, timeoutMs = 20_000) {
      const key = to.toLowerCase();
      const seen = consumed.get(key) ?? 0;
      consumed.set(key, seen + 1);
      const have = forTo(key);
      if (have.length > seen) return Promise.resolve(have[seen]!);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no mail to ${to} within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          to: key,
          seen,
          resolve: (r) => {
            clearTimeout(t);
            resolve(r);
          },
        });
      });
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** The link a mail carries to this server's `path`, and its token. */
export function linkIn(r: Received, path: string): { url: string; token: string } {
  const m = (r.mail.text ?? '').match(new RegExp(`(https?://\\S+${path}\\?token=([A-Za-z0-9_%-]+))`));
  if (!m) throw new Error(`no ${path} link in:\n${r.mail.text}`);
  return { url: m[1]!, token: decodeURIComponent(m[2]!) };
}
