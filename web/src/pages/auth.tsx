// First run (create the administrator) and sign in. Both forms post with htmx to the API's own
// register and login routes, which answer HX-Request calls with HTML fragments and an HX-Redirect;
// a JSON error (the login's 401) is shown as text by app.js. Before signing in, a person picks the
// pages' language here (a cookie, issue 48).
import { LOCALE_NAMES, LOCALES, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { SsoButton, type SsoConfig } from './sso';

export function SignIn({ redirect, sso = null }: { redirect: string; sso?: SsoConfig | null }) {
  const { t } = useI18n();
  return (
    <section class="card narrow" aria-labelledby="login-title">
      <h1 id="login-title">{t('signIn.heading')}</h1>
      <SsoButton sso={sso} redirect={redirect} />
      {/* OIDC_ONLY hides the password form (and the API refuses a password sign-in) */}
      <form
        id="login"
        hidden={sso?.enabled === true && sso.only}
        method="post"
        action="/api/auth/login"
        hx-post="/api/auth/login"
        hx-target="#error"
        hx-swap="innerHTML"
        hx-disabled-elt="find button"
      >
        <input type="hidden" name="redirect" value={redirect} />
        <label for="login-name">{t('signIn.login')}</label>
        <input id="login-name" name="login" autocomplete="username" required />
        <label for="password">{t('signIn.password')}</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" id="submit" class="primary">
          {t('signIn.submit')}
        </button>
        <Outcome id="error" />
      </form>
      {/* mail (issue 47): the way to a reset link, while this server sends mail */}
      <div id="forgot" hx-get="/login/forgot-link" hx-trigger="load" hx-swap="outerHTML" />
      <LanguagePicker back={`/login?redirect=${encodeURIComponent(redirect)}`} />
    </section>
  );
}

/** The language of the pages before signing in: kept in a cookie (POST /language), the browser's until chosen. */
export function LanguagePicker({ back }: { back: string }) {
  const { t, locale } = useI18n();
  return (
    <form id="language-form" class="language" method="post" action="/language">
      <input type="hidden" name="back" value={back} />
      <label for="language">{t('language.label')}</label>
      <select id="language" name="language">
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l} selected={l === locale}>
            {LOCALE_NAMES[l]}
          </option>
        ))}
      </select>
      <button type="submit" id="choose-language">
        {t('language.choose')}
      </button>
    </form>
  );
}

export function FirstRun() {
  const { t } = useI18n();
  return (
    <section class="card narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">{t('setup.heading')}</h1>
      <p>{t('setup.intro')}</p>
      <form id="setup" method="post" action="/api/auth/register" hx-post="/api/auth/register" hx-target="#error" hx-swap="innerHTML" hx-disabled-elt="find button">
        <label for="setup-username">{t('setup.username')}</label>
        <input id="setup-username" name="username" autocomplete="username" minlength={3} maxlength={50} required />
        <label for="setup-email">{t('setup.email')}</label>
        <input id="setup-email" name="email" type="email" autocomplete="email" required />
        <label for="setup-password">{t('setup.password')}</label>
        <input id="setup-password" name="password" type="password" autocomplete="new-password" required />
        <button type="submit" id="create-admin" class="primary">
          {t('setup.submit')}
        </button>
        <Outcome id="error" />
      </form>
      <LanguagePicker back="/setup" />
    </section>
  );
}
