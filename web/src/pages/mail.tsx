// Mail's pages (issue 47): forgot password, a reset link's new password, an invitation's account,
// the admin's test mail and invitations, and the e-reader address on the profile. Every form posts
// with htmx to the API's mail routes, which word each outcome.
import { Outcome } from '../layout';

export function ForgotPassword() {
  return (
    <section class="card narrow" aria-labelledby="forgot-title">
      <h1 id="forgot-title">Forgot your password?</h1>
      <p>Type the e-mail address of your account: a link to choose a new password is mailed to it. The link works once, for 30 minutes.</p>
      <form id="forgot" hx-post="/api/auth/password-reset/request" hx-ext="bindery-json" hx-target="#forgot-outcome" hx-disabled-elt="find button">
        <label for="forgot-email">E-mail</label>
        <input id="forgot-email" name="email" type="email" autocomplete="email" required maxlength={254} />
        <button type="submit" class="primary" id="forgot-send">
          Send the link
        </button>
        <Outcome id="forgot-outcome" />
      </form>
      <p>
        <a href="/login">Back to sign in</a>
      </p>
    </section>
  );
}

export function ResetPassword({ token }: { token: string }) {
  return (
    <section class="card narrow" aria-labelledby="reset-title">
      <h1 id="reset-title">Choose a new password</h1>
      <p>Setting it signs your account out everywhere: sign in again with the new password.</p>
      <form id="reset" hx-post="/api/auth/password-reset" hx-ext="bindery-json" hx-target="#reset-outcome" hx-disabled-elt="find button">
        <input type="hidden" name="token" value={token} />
        <label for="reset-password">New password</label>
        <input id="reset-password" name="new_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <label for="reset-confirm">The same again</label>
        <input id="reset-confirm" name="confirm_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <button type="submit" class="primary" id="reset-save">
          Set the password
        </button>
        <Outcome id="reset-outcome" />
      </form>
    </section>
  );
}

export function AcceptInvitation({ token, invitation }: { token: string; invitation: { email: string; role: string } | null }) {
  if (!invitation)
    return (
      <section class="card narrow" aria-labelledby="invite-title">
        <h1 id="invite-title">Invitation</h1>
        <p role="alert">This invitation is invalid, used or expired. Ask the person who invited you for a new one.</p>
        <p>
          <a href="/login">Sign in</a>
        </p>
      </section>
    );
  return (
    <section class="card narrow" aria-labelledby="invite-title">
      <h1 id="invite-title">Make your account</h1>
      <p>
        You are invited as <strong>{invitation.email}</strong>
        {invitation.role === 'admin' ? ', an administrator' : ''}. Choose how you sign in.
      </p>
      <form id="accept" hx-post="/api/auth/invitations/accept" hx-ext="bindery-json" hx-target="#accept-outcome" hx-disabled-elt="find button">
        <input type="hidden" name="token" value={token} />
        <label for="accept-username">Username</label>
        <input id="accept-username" name="username" autocomplete="username" required minlength={3} maxlength={50} />
        <label for="accept-password">Password</label>
        <input id="accept-password" name="password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <label for="accept-confirm">The same again</label>
        <input id="accept-confirm" name="confirm_password" type="password" autocomplete="new-password" required minlength={8} maxlength={128} />
        <button type="submit" class="primary" id="accept-create">
          Make my account
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
  return (
    <div id="invitations" hx-get="/admin/mail/invitations" hx-trigger="invitations-changed from:body" hx-swap="outerHTML">
      {invitations.length === 0 ? (
        <p class="muted">No open invitations.</p>
      ) : (
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Libraries</th>
              <th scope="col">Expires</th>
              <th scope="col">Withdraw</th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id} data-invitation={i.email}>
                <td data-label="E-mail">{i.email}</td>
                <td data-label="Role">{i.role === 'admin' ? 'Administrator' : 'Reader'}</td>
                <td data-label="Libraries">{i.all_libraries ? 'every library' : `${i.library_ids.length} chosen`}</td>
                <td data-label="Expires">{`${i.expires_at.slice(0, 16).replace('T', ' ')} UTC`}</td>
                <td data-label="Withdraw">
                  <button type="button" hx-delete={`/api/admin/invitations/${i.id}`} hx-target="#invite-outcome" aria-label={`Withdraw the invitation of ${i.email}`}>
                    Withdraw
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
  return (
    <>
      <h1>Mail</h1>
      <section class="card" aria-labelledby="test-title">
        <h2 id="test-title">Test mail</h2>
        <p>Sends a message to your own address through the server set by SMTP_URL. Books mailed to e-readers may be at most {Math.round(maxBytes / 1_000_000)} MB.</p>
        <button type="button" id="send-test-mail" hx-post="/api/admin/mail/test" hx-target="#test-mail-outcome">
          Send a test mail
        </button>
        <Outcome id="test-mail-outcome" />
      </section>
      <section class="card" aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form id="invite" hx-post="/api/admin/invitations" hx-ext="bindery-json" hx-target="#invite-outcome" data-reset-on-success>
          <label for="invite-email">E-mail</label>
          <input id="invite-email" name="email" type="email" required maxlength={254} />
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role">
            <option value="user">Reader</option>
            <option value="admin">Administrator</option>
          </select>
          <label for="invite-all">Libraries</label>
          <select id="invite-all" name="all_libraries:bool">
            <option value="false">Only the libraries chosen below</option>
            <option value="true">Every library</option>
          </select>
          <fieldset>
            <legend>Libraries chosen</legend>
            <input type="hidden" name="library_ids[]" value="" />
            {libraries.length === 0 && <p class="muted">No libraries yet.</p>}
            {libraries.map((l) => (
              <label key={l.id} class="check">
                <input type="checkbox" name="library_ids[]" value={l.id} /> {l.name}
              </label>
            ))}
          </fieldset>
          <button type="submit" class="primary" id="invite-send">
            Send the invitation
          </button>
          <Outcome id="invite-outcome" />
        </form>
        <h3>Open invitations</h3>
        <InvitationList invitations={invitations} />
      </section>
    </>
  );
}

/** The admin settings page's mail card: the test mail and the way to the invitations. */
export function MailCard() {
  return (
    <section class="card" id="mail-admin" aria-labelledby="mail-card-title">
      <h2 id="mail-card-title">Mail</h2>
      <button type="button" id="settings-test-mail" hx-post="/api/admin/mail/test" hx-target="#settings-test-mail-outcome">
        Send a test mail
      </button>
      <Outcome id="settings-test-mail-outcome" />
      <p>
        <a href="/admin/mail">Invitations and mail</a>
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

const STATUS: Record<SentBook['status'], string> = { pending: 'On its way', sent: 'Sent', failed: 'Failed' };

/** The person's latest sends with their status: what the mail server said of a failed one, when a put-off one is tried again. */
function Sends({ sends }: { sends: SentBook[] }) {
  if (sends.length === 0)
    return (
      <p class="muted" id="sends-none">
        No book sent yet: use Send on a book's page.
      </p>
    );
  return (
    <table id="sends">
      <caption>Books sent</caption>
      <thead>
        <tr>
          <th scope="col">Book</th>
          <th scope="col">To</th>
          <th scope="col">Status</th>
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
              {STATUS[x.status]}
              {x.status === 'pending' && x.attempts > 0 && x.next_attempt_at && ` (tried ${x.attempts}×, again at ${x.next_attempt_at.slice(11, 16)} UTC)`}
              {x.status === 'failed' && x.detail && `: ${x.detail}`}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function EreaderCard({ address, sends = [] }: { address: string; sends?: SentBook[] }) {
  return (
    <section class="card" id="ereader" aria-labelledby="ereader-title">
      <h2 id="ereader-title">E-reader</h2>
      <p>Books you send are mailed to this address (a Kindle's is name@kindle.com; allow this server's sender in your Amazon settings).</p>
      <form id="ereader-form" hx-put="/api/auth/ereader" hx-ext="bindery-json" hx-target="#ereader-outcome">
        <label for="ereader-address">E-reader's e-mail address</label>
        <input id="ereader-address" name="address" type="email" value={address} maxlength={254} autocomplete="off" />
        <button type="submit" class="primary" id="ereader-save">
          Save the address
        </button>
        <Outcome id="ereader-outcome" />
      </form>
      <Sends sends={sends.slice(0, 20)} />
    </section>
  );
}
