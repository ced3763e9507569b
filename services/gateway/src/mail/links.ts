// The mails that carry a link (issue 47): a password reset and an invitation. The link's address is
// the server's public one (PUBLIC_URL, else a name of this machine), never a Host header's guess.
// Their words are identity's catalogs', in the recipient's language (issue 48).
import { invitationText, resetText } from '@bindery/identity/mail-texts';
import type { MailMessage } from '@bindery/platform';

export function resetMail(base: string, to: string, username: string, token: string, expiresAt: string, language?: string): MailMessage {
  const link = `${base}/reset-password?token=${encodeURIComponent(token)}`;
  return { to, ...resetText(language, username, link, expiresAt) };
}

/** An invitation's recipient has no account, so no language of their own: English unless one is given. */
export function invitationMail(base: string, to: string, token: string, expiresAt: string, language?: string): MailMessage {
  const link = `${base}/invitation?token=${encodeURIComponent(token)}`;
  return { to, ...invitationText(language, link, expiresAt) };
}
