// Mail's pages (issue 47): forgot password, a reset link's new password, an invitation's account,
// the admin's test mail and invitations, and the e-reader address on the profile. Every form posts
// with htmx to the API's mail routes, which word each outcome.
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Sentence } from './slot';

export function ForgotPassword() {
  const { t } = useI18n();
  return (
    <section class="card narrow" aria-labelledby="forgot-title">
      <h1 id="forgot-title">{t('mail.forgot.heading')}</h1>
      <p>{t('mail.forgot.intro')}</p>
      <form id="forgot" hx-post="/api/auth/password-reset/request" hx-ext="bindery-json" hx-target="#forgot-outcome" hx-disabled-elt="find button">
        <label for="forgot-email">{t('mail.email')}</label>
        <input id="forgot-email" name="email" type="email" autocomplete="email" required maxlength={254} />
        <button type="submit" class="primary" id="forgot-send">
          {t('mail.forgot.send')}
        </button>
        <Outcome id="forgot-outcome" />
      </form>
      <p>
        <a href="/login">{t('mail.backToSignIn')}</a>
      </p>
    </section>
  );
}

export function ResetPassword({ token }: { token: string }) {
  const { t } = useI18n();
  return (
    <section class="card narrow" aria-labelledby="reset-title">
      <h1 id="reset-title">{t('mail.reset.heading')}</h1>
      <p>{t('mail.reset.intro')}</p>
      <form id="reset" hx-post="/api/auth/password-reset" hx-ext="bindery-json" hx-target="#reset-outcome" hx-disabled-elt="find button">
        <input type="hidden" name="token" value={token} />
        <label for="reset-password">{t('mail.newPassword')}</label>
        <input id="reset-password" name="new_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <label for="reset-confirm">{t('mail.sameAgain')}</label>
        <input id="reset-confirm" name="confirm_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <button type="submit" class="primary" id="reset-save">
          {t('mail.reset.save')}
        </button>
        <Outcome id="reset-outcome" />
      </form>
    </section>
  );
}

export function AcceptInvitation({ token, invitation }: { token: string; invitation: { email: string; role: string } | null }) {
  const { t } = useI18n();
  if (!invitation)
    return (
      <section class="card narrow" aria-labelledby="invite-title">
        <h1 id="invite-title">{t('mail.invitation.heading')}</h1>
        <p role="alert">{t('mail.invitation.invalid')}</p>
        <p>
          <a href="/login">{t('mail.signIn')}</a>
        </p>
      </section>
    );
  return (
    <section class="card narrow" aria-labelledby="invite-title">
      <h1 id="invite-title">{t('mail.accept.heading')}</h1>
      <p>
        <Sentence t={t} k={invitation.role === 'admin' ? 'mail.accept.invitedAdmin' : 'mail.accept.invited'} slots={{ email: <strong>{invitation.email}</strong> }} />
      </p>
      <form id="accept" hx-post="/api/auth/invitations/accept" hx-ext="bindery-json" hx-target="#accept-outcome" hx-disabled-elt="find button">
        <input type="hidden" name="token" value={token} />
        <label for="accept-username">{t('mail.username')}</label>
        <input id="accept-username" name="username" autocomplete="username" required minlength={3} maxlength={50} />
        <label for="accept-password">{t('mail.password')}</label>
        <input id="accept-password" name="password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <label for="accept-confirm">{t('mail.sameAgain')}</label>
        <input id="accept-confirm" name="confirm_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <button type="submit" class="primary" id="accept-create">
          {t('mail.accept.submit')}
        </button>
        <Outcome id="accept-outcome" />
      </form>
    </section>
  );
}

export interface InvitationRow {
  id: string;
  email: string;
  role: string;
  all_libraries: boolean;
  library_ids: string[];
  expires_at: string;
}

export function InvitationList({ invitations }: { invitations: InvitationRow[] }) {
  const { t, date } = useI18n();
  return (
    <div id="invitations" hx-get="/admin/mail/invitations" hx-trigger="invitations-changed from:body" hx-swap="outerHTML">
      {invitations.length === 0 ? (
        <p class="muted">{t('mail.invitations.none')}</p>
      ) : (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">{t('mail.email')}</th>
              <th scope="col">{t('mail.role')}</th>
              <th scope="col">{t('mail.libraries')}</th>
              <th scope="col">{t('mail.invitations.expires')}</th>
              <th scope="col">{t('mail.invitations.withdraw')}</th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id} data-invitation={i.email}>
                <td data-label={t('mail.email')}>{i.email}</td>
                <td data-label={t('mail.role')}>{i.role === 'admin' ? t('mail.role.admin') : t('mail.role.user')}</td>
                <td data-label={t('mail.libraries')}>{i.all_libraries ? t('mail.invitations.everyLibrary') : t('mail.invitations.chosen', { count: i.library_ids.length })}</td>
                <td data-label={t('mail.invitations.expires')}>{date(i.expires_at, { dateStyle: 'medium', timeStyle: 'short' })}</td>
                <td data-label={t('mail.invitations.withdraw')}>
                  <button
                    type="button"
                    hx-delete={`/api/admin/invitations/${i.id}`}
                    hx-target="#invite-outcome"
                    aria-label={t('mail.invitations.withdrawLabel', { email: i.email })}
                  >
                    {t('mail.invitations.withdraw')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function AdminMail({ invitations, libraries, maxBytes }: { invitations: InvitationRow[]; libraries: { id: string; name: string }[]; maxBytes: number }) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('mail.heading')}</h1>
      <section class="card" aria-labelledby="test-title">
        <h2 id="test-title">{t('mail.test.heading')}</h2>
        <p>{t('mail.test.intro', { mb: Math.round(maxBytes / 1_000_000) })}</p>
        <button type="button" id="send-test-mail" hx-post="/api/admin/mail/test" hx-target="#test-mail-outcome">
          {t('mail.test.send')}
        </button>
        <Outcome id="test-mail-outcome" />
      </section>
      <section class="card" aria-labelledby="invite-title">
        <h2 id="invite-title">{t('mail.invite.heading')}</h2>
        <form id="invite" hx-post="/api/admin/invitations" hx-ext="bindery-json" hx-target="#invite-outcome" data-reset-on-success>
          <label for="invite-email">{t('mail.email')}</label>
          <input id="invite-email" name="email" type="email" required maxlength={254} />
          <label for="invite-role">{t('mail.role')}</label>
          <select id="invite-role" name="role">
            <option value="user">{t('mail.role.user')}</option>
            <option value="admin">{t('mail.role.admin')}</option>
          </select>
          <label for="invite-all">{t('mail.libraries')}</label>
          <select id="invite-all" name="all_libraries:bool">
            <option value="false">{t('mail.invite.chosenBelow')}</option>
            <option value="true">{t('mail.invite.every')}</option>
          </select>
          <fieldset>
            <legend>{t('mail.invite.chosen')}</legend>
            <input type="hidden" name="library_ids[]" value="" />
            {libraries.length === 0 && <p class="muted">{t('mail.invite.noLibraries')}</p>}
            {libraries.map((l) => (
              <label key={l.id} class="check">
                <input type="checkbox" name="library_ids[]" value={l.id} /> {l.name}
              </label>
            ))}
          </fieldset>
          <button type="submit" class="primary" id="invite-send">
            {t('mail.invite.send')}
          </button>
          <Outcome id="invite-outcome" />
        </form>
        <h3>{t('mail.invitations.open')}</h3>
        <InvitationList invitations={invitations} />
      </section>
    </>
  );
}

/** The admin settings page's mail card: the test mail and the way to the invitations. */
export function MailCard() {
  const { t } = useI18n();
  return (
    <section class="card" id="mail-admin" aria-labelledby="mail-card-title">
      <h2 id="mail-card-title">{t('mail.heading')}</h2>
      <button type="button" id="settings-test-mail" hx-post="/api/admin/mail/test" hx-target="#settings-test-mail-outcome">
        {t('mail.test.send')}
      </button>
      <Outcome id="settings-test-mail-outcome" />
      <p>
        <a href="/admin/mail">{t('mail.card.link')}</a>
      </p>
    </section>
  );
}

/** A book sent to the e-reader, as `GET /api/sends` answers it. */
export interface SentBook {
  id: string;
  item_id: string;
  title: string;
  format: string;
  address: string;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  detail: string;
  next_attempt_at: string | null;
  created_at: string;
}

const STATUS: Record<SentBook['status'], MessageKey> = { pending: 'mail.sends.pending', sent: 'mail.sends.sent', failed: 'mail.sends.failed' };

/** The person's latest sends with their status: what the mail server said of a failed one, when a put-off one is tried again. */
function Sends({ sends }: { sends: SentBook[] }) {
  const { t, date } = useI18n();
  if (sends.length === 0)
    return (
      <p class="muted" id="sends-none">
        {t('mail.sends.none')}
      </p>
    );
  return (
    <table id="sends">
      <caption>{t('mail.sends.caption')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('mail.sends.book')}</th>
          <th scope="col">{t('mail.sends.to')}</th>
          <th scope="col">{t('mail.sends.status')}</th>
        </tr>
      </thead>
      <tbody>
        {sends.map((x) => (
          <tr key={x.id} data-send={x.id}>
            <td>
              <a href={`/books/${x.item_id}`}>{x.title}</a> <span class="muted">({x.format.toUpperCase()})</span>
            </td>
            <td>{x.address}</td>
            <td class="send-status">
              {t(STATUS[x.status])}
              {x.status === 'pending' &&
                x.attempts > 0 &&
                x.next_attempt_at &&
                ` ${t('mail.sends.retrying', { attempts: x.attempts, at: date(x.next_attempt_at, { timeStyle: 'short' }) })}`}
              {x.status === 'failed' && x.detail && `: ${x.detail}`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function EreaderCard({ address, sends = [] }: { address: string; sends?: SentBook[] }) {
  const { t } = useI18n();
  return (
    <section class="card" id="ereader" aria-labelledby="ereader-title">
      <h2 id="ereader-title">{t('mail.ereader.heading')}</h2>
      <p>{t('mail.ereader.intro')}</p>
      <form id="ereader-form" hx-put="/api/auth/ereader" hx-ext="bindery-json" hx-target="#ereader-outcome">
        <label for="ereader-address">{t('mail.ereader.address')}</label>
        <input id="ereader-address" name="address" type="email" value={address} maxlength={254} autocomplete="off" />
        <button type="submit" class="primary" id="ereader-save">
          {t('mail.ereader.save')}
        </button>
        <Outcome id="ereader-outcome" />
      </form>
      <Sends sends={sends.slice(0, 20)} />
    </section>
  );
}
