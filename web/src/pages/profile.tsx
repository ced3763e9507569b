// The profile: who you are, your names, e-mail and time zone (PUT /api/auth/profile), the theme (PUT /api/auth/theme; the page reloads in it) and the
// password change (PUT /api/auth/password) and the sessions (pages/sessions.tsx); the identity
// service words every outcome.
import { Outcome, type Viewer } from '../layout';
import { THEMES } from '../theme';

export interface ProfileData extends Viewer {
  email: string;
  first_name: string;
  last_name: string;
}

/** The IANA time zones this server knows (the list identity checks against), UTC first. */
let zones: string[] | null = null;
export function timeZones(): string[] {
  zones ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  return zones;
}

export function Profile({ me }: { me: ProfileData }) {
  const current = THEMES.some((t) => t.value === me.theme) ? me.theme : undefined;
  return (
    <>
      <h1>Your profile</h1>
      <section class="card" aria-labelledby="account-title">
        <h2 id="account-title">Account</h2>
        <dl class="meta">
          <dt>Username</dt>
          <dd id="profile-username">{me.username}</dd>
          <dt>E-mail</dt>
          <dd id="profile-email">{me.email}</dd>
          <dt>Role</dt>
          <dd id="profile-role">{me.role === 'admin' ? 'Administrator' : 'Reader'}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="details-title">
        <h2 id="details-title">Your details</h2>
        <form id="details-form" hx-put="/api/auth/profile" hx-ext="bindery-json" hx-target="#details-outcome">
          <label for="first-name">First name</label>
          <input id="first-name" name="first_name" value={me.first_name} maxlength={100} autocomplete="given-name" />
          <label for="last-name">Last name</label>
          <input id="last-name" name="last_name" value={me.last_name} maxlength={100} autocomplete="family-name" />
          <label for="email">E-mail</label>
          <input id="email" name="email" type="email" value={me.email} required autocomplete="email" />
          <label for="timezone">Time zone</label>
          {/* the profile does not say which zone is set: the first choice leaves it as it is */}
          <select id="timezone" name="timezone">
            <option value="">Keep the current time zone</option>
            {timeZones().map((z) => (
              <option key={z} value={z}>
                {z.replaceAll('_', ' ')}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="save-details">
            Save details
          </button>
          <Outcome id="details-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="theme-title">
        <h2 id="theme-title">Theme</h2>
        <form id="theme-form" hx-put="/api/auth/theme" hx-ext="bindery-json" hx-target="#theme-outcome" data-reload>
          <label for="theme">Colours</label>
          <select id="theme" name="theme">
            {!current && <option value={me.theme ?? ''}>{`Current (${me.theme || 'default'})`}</option>}
            {THEMES.map((t) => (
              <option key={t.value} value={t.value} selected={t.value === current}>
                {t.label}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="save-theme">
            Save theme
          </button>
          <Outcome id="theme-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Where you are signed in</h2>
        {/* fetched after the page, like the book page's lists */}
        <div id="sessions" hx-get="/profile/sessions" hx-trigger="load" hx-swap="outerHTML">
          <p class="muted">Loading your sessions…</p>
        </div>
        <Outcome id="sessions-outcome" />
      </section>
      {/* single sign-on: the link to the provider and the app passwords (nothing when it is off) */}
      <div id="sso" hx-get="/profile/sso" hx-trigger="load" hx-swap="outerHTML" />
      {/* mail (issue 47): where this person's books are mailed (nothing while mail is off) */}
      <div id="ereader" hx-get="/profile/ereader" hx-trigger="load" hx-swap="outerHTML" />
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">Change password</h2>
        <form id="password-form" hx-put="/api/auth/password" hx-ext="bindery-json" hx-target="#password-outcome" data-reset-on-success>
          <input type="text" name="username" value={me.username} autocomplete="username" hidden />
          <label for="current-password">Current password</label>
          <input id="current-password" name="current_password" type="password" autocomplete="current-password" required />
          <label for="new-password">New password</label>
          <input id="new-password" name="new_password" type="password" autocomplete="new-password" required />
          <label for="confirm-password">New password again</label>
          <input id="confirm-password" name="confirm_password" type="password" autocomplete="new-password" required />
          <button type="submit" class="primary" id="change-password">
            Change password
          </button>
          <Outcome id="password-outcome" />
        </form>
      </section>
    </>
  );
}
