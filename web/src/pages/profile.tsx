// The profile: who you are, your names, e-mail and time zone (PUT /api/auth/profile), the theme (PUT /api/auth/theme; the page reloads in it) and the
// password change (PUT /api/auth/password) and the sessions (pages/sessions.tsx); the identity
// service words every outcome.
import { LOCALE_NAMES, LOCALES, useI18n } from '../i18n';
import { Outcome, type Viewer } from '../layout';
import { THEMES } from '../theme';

export interface ProfileData extends Viewer {
  email: string;
  first_name: string;
  last_name: string;
  /** present (true) while the person lets admins see their reading statistics (decision 120) */
  share_statistics?: boolean;
}

/** The IANA time zones this server knows (the list identity checks against), UTC first. */
let zones: string[] | null = null;
export function timeZones(): string[] {
  zones ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  return zones;
}

export function Profile({ me }: { me: ProfileData }) {
  const current = THEMES.some((x) => x.value === me.theme) ? me.theme : undefined;
  const { t } = useI18n();
  return (
    <>
      <h1>{t('profile.heading')}</h1>
      <section class="card" aria-labelledby="account-title">
        <h2 id="account-title">{t('profile.account')}</h2>
        <dl class="meta">
          <dt>{t('profile.username')}</dt>
          <dd id="profile-username">{me.username}</dd>
          <dt>{t('profile.email')}</dt>
          <dd id="profile-email">{me.email}</dd>
          <dt>{t('profile.role')}</dt>
          <dd id="profile-role">{me.role === 'admin' ? t('profile.role.admin') : t('profile.role.user')}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="details-title">
        <h2 id="details-title">{t('profile.details')}</h2>
        <form id="details-form" hx-put="/api/auth/profile" hx-ext="bindery-json" hx-target="#details-outcome">
          <label for="first-name">{t('profile.firstName')}</label>
          <input id="first-name" name="first_name" value={me.first_name} maxlength={100} autocomplete="given-name" />
          <label for="last-name">{t('profile.lastName')}</label>
          <input id="last-name" name="last_name" value={me.last_name} maxlength={100} autocomplete="family-name" />
          <label for="email">{t('profile.email')}</label>
          <input id="email" name="email" type="email" value={me.email} required autocomplete="email" />
          <label for="timezone">{t('profile.timezone')}</label>
          {/* the profile does not say which zone is set: the first choice leaves it as it is */}
          <select id="timezone" name="timezone">
            <option value="">{t('profile.timezone.keep')}</option>
            {timeZones().map((z) => (
              <option key={z} value={z}>
                {z.replaceAll('_', ' ')}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="save-details">
            {t('profile.saveDetails')}
          </button>
          <Outcome id="details-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="theme-title">
        <h2 id="theme-title">{t('profile.theme')}</h2>
        <form id="theme-form" hx-put="/api/auth/theme" hx-ext="bindery-json" hx-target="#theme-outcome" data-reload>
          <label for="theme">{t('profile.colours')}</label>
          <select id="theme" name="theme">
            {!current && <option value={me.theme ?? ''}>{t('profile.theme.current', { theme: me.theme || t('profile.theme.default') })}</option>}
            {THEMES.map((x) => (
              <option key={x.value} value={x.value} selected={x.value === current}>
                {x.label}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="save-theme">
            {t('profile.saveTheme')}
          </button>
          <Outcome id="theme-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="language-title">
        <h2 id="language-title">{t('language.label')}</h2>
        {/* the pages' language (issue 48): saved in the profile, the page reloads in it */}
        <form id="language-form" hx-put="/api/auth/profile" hx-ext="bindery-json" hx-target="#language-outcome" data-reload>
          <label for="language">{t('language.label')}</label>
          <select id="language" name="language">
            <option value="auto" selected={!me.language}>
              {t('language.browser')}
            </option>
            {LOCALES.map((l) => (
              <option key={l} value={l} lang={l} selected={l === me.language}>
                {LOCALE_NAMES[l]}
              </option>
            ))}
          </select>
          <button type="submit" class="primary" id="save-language">
            {t('language.save')}
          </button>
          <Outcome id="language-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="sharing-title">
        <h2 id="sharing-title">{t('profile.statistics')}</h2>
        {/* decision 120: unchecked, the hidden `false` is what is sent (a checkbox sends nothing); checked, its `true` comes after it and wins */}
        <form id="sharing-form" hx-put="/api/auth/profile" hx-ext="bindery-json" hx-target="#sharing-outcome">
          <input type="hidden" name="share_statistics:bool" value="false" />
          <label class="inline" for="share-statistics">
            <input
              type="checkbox"
              id="share-statistics"
              name="share_statistics:bool"
              value="true"
              checked={me.share_statistics === true}
              aria-describedby="share-statistics-hint"
            />{' '}
            {t('profile.shareStatistics')}
          </label>
          <p id="share-statistics-hint" class="muted">
            {t('profile.shareStatistics.hint')}
          </p>
          <button type="submit" class="primary" id="save-sharing">
            {t('profile.saveSharing')}
          </button>
          <Outcome id="sharing-outcome" />
        </form>
      </section>
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">{t('profile.sessions')}</h2>
        {/* fetched after the page, like the book page's lists */}
        <div id="sessions" hx-get="/profile/sessions" hx-trigger="load" hx-swap="outerHTML">
          <p class="muted">{t('profile.sessions.loading')}</p>
        </div>
        <Outcome id="sessions-outcome" />
      </section>
      {/* single sign-on: the link to the provider and the app passwords (nothing when it is off) */}
      <div id="sso" hx-get="/profile/sso" hx-trigger="load" hx-swap="outerHTML" />
      {/* mail (issue 47): where this person's books are mailed (nothing while mail is off) */}
      <div id="ereader" hx-get="/profile/ereader" hx-trigger="load" hx-swap="outerHTML" />
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">{t('profile.password')}</h2>
        <form id="password-form" hx-put="/api/auth/password" hx-ext="bindery-json" hx-target="#password-outcome" data-reset-on-success>
          <input type="text" name="username" value={me.username} autocomplete="username" hidden />
          <label for="current-password">{t('profile.password.current')}</label>
          <input id="current-password" name="current_password" type="password" autocomplete="current-password" required />
          <label for="new-password">{t('profile.password.new')}</label>
          <input id="new-password" name="new_password" type="password" autocomplete="new-password" required />
          <label for="confirm-password">{t('profile.password.again')}</label>
          <input id="confirm-password" name="confirm_password" type="password" autocomplete="new-password" required />
          <button type="submit" class="primary" id="change-password">
            {t('profile.password.submit')}
          </button>
          <Outcome id="password-outcome" />
        </form>
      </section>
    </>
  );
}
