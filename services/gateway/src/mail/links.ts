// The mails that carry a link (issue 47): a password reset and an invitation. The link's address is
// the server's public one (PUBLIC_URL, else a name of this machine), never a Host header's guess.
import type { MailMessage } from '@bindery/platform';

const minutes = (iso: string, now = Date.now()) => Math.max(1, Math.round((new Date(iso).getTime() - now) / 60_000));

export function resetMail(base: string, to: string, username: string, token: string, expiresAt: string): MailMessage {
  const link = `${base}/reset-password?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'Reset your Bindery password',
    text: [
      `Hello ${username},`,
      '',
      'Someone (we hope you) asked to reset the password of your Bindery account. To choose a new password, open:',
      '',
      link,
      '',
      `The link works once, for the next ${minutes(expiresAt)} minutes. Using it signs your account out everywhere.`,
      'If you did not ask for this, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}

export function invitationMail(base: string, to: string, token: string, expiresAt: string): MailMessage {
  const link = `${base}/invitation?token=${encodeURIComponent(token)}`;
  return {
    to,
    subject: 'You are invited to a Bindery library',
    text: [
      'Hello,',
      '',
      'You are invited to read the books of a Bindery library. To make your account, choose a username and a password at:',
      '',
      link,
      '',
      `The link works once, until ${new Date(expiresAt).toUTCString()}.`,
    ].join('\n'),
  };
}
