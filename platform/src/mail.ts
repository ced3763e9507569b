// Outgoing mail over SMTP (SMTP_URL, MAIL_FROM): the transport and its configuration, no domain in
// it. Mail is optional: without both variables `mailConfig` answers null and the features that
// mail hide themselves.
import nodemailer, { type Transporter } from 'nodemailer';
import Type from 'typebox';
import { ConfigError, loadConfig } from './config';

const MailEnv = Type.Object({
  SMTP_URL: Type.Optional(Type.String()),
  MAIL_FROM: Type.Optional(Type.String()),
  /** the largest attachment a send to an e-reader takes (bytes; the providers' limit, Kindle's 50 MB) */
  MAIL_MAX_ATTACHMENT_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * 1024 * 1024, default: 50 * 1000 * 1000 }),
});

export interface MailConfig {
  /** smtp:// (STARTTLS when offered) or smtps:// (TLS from the start), with its user and password */
  url: string;
  from: string;
  maxAttachmentBytes: number;
}

// An address as a person types it: no spaces or angle brackets, one @, a dotted domain.
const ADDRESS = /^[^\s@<>()",;:\\[\]]+@[^\s@<>()",;:\\[\]]+\.[^\s@<>()",;:\\[\]]+$/;
export const isMailAddress = (s: string): boolean => s.length <= 254 && ADDRESS.test(s);

/**
 * The mail settings from the environment, checked once at start: null when SMTP_URL and MAIL_FROM
 * are both unset; a ConfigError naming the variable for a half or a wrong configuration.
 */
export function mailConfig(env: NodeJS.ProcessEnv = process.env): MailConfig | null {
  const c = loadConfig(MailEnv, env);
  if (!c.SMTP_URL && !c.MAIL_FROM) return null;
  if (!c.SMTP_URL) throw new ConfigError('SMTP_URL', 'is required when MAIL_FROM is set');
  if (!c.MAIL_FROM) throw new ConfigError('MAIL_FROM', 'is required when SMTP_URL is set');
  let u: URL;
  try {
    u = new URL(c.SMTP_URL);
  } catch {
    throw new ConfigError('SMTP_URL', 'must be a URL like smtps://user:password@mail.example.com:465');
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', 'must start with smtp:// or smtps://');
  if (!u.hostname) throw new ConfigError('SMTP_URL', 'must name the mail server');
  if (!u.username || !u.password) throw new ConfigError('SMTP_URL', 'must carry a user and a password (smtps://user:password@host)');
  const from = c.MAIL_FROM.trim();
  const bare = from.match(/<([^>]*)>\s*$/)?.[1] ?? from;
  if (!isMailAddress(bare)) throw new ConfigError('MAIL_FROM', 'must be an address such as "Bindery <books@example.com>"');
  return { url: c.SMTP_URL, from, maxAttachmentBytes: c.MAIL_MAX_ATTACHMENT_BYTES };
}

export interface MailAttachment {
  filename: string;
  contentType: string;
  /** a file on disk, streamed into the message */
  path: string;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  attachments?: MailAttachment[];
}

/** What the SMTP server said: its reply to the message, or why it was refused. */
export type MailOutcome = { ok: true; response: string } | { ok: false; permanent: boolean; error: string };

export class Mailer {
  private readonly transport: Transporter;

  constructor(readonly config: MailConfig) {
    // one connection per message: sends are rare, and a pooled connection would outlive a server restart
    this.transport = nodemailer.createTransport(config.url, { from: config.from });
  }

  async send(m: MailMessage): Promise<MailOutcome> {
    try {
      const info = await this.transport.sendMail({
        from: this.config.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        ...(m.html ? { html: m.html } : {}),
        ...(m.attachments ? { attachments: m.attachments } : {}),
      });
      return { ok: true, response: String(info.response ?? '') };
    } catch (e) {
      const x = e as { responseCode?: number; response?: string; message?: string };
      // 5xx is the server's final word on this message; anything else (4xx, a dropped connection) may pass later
      const permanent = typeof x.responseCode === 'number' && x.responseCode >= 500;
      const said = (x.response ?? x.message ?? String(e)).replace(/[^\x20-\x7e]/g, ' ').slice(0, 300);
      return { ok: false, permanent, error: said };
    }
  }

  close(): void {
    this.transport.close();
  }
}
