// First run (create the administrator) and sign in. Both forms post with htmx to the API's own
// register and login routes, which answer HX-Request calls with HTML fragments and an HX-Redirect;
// a JSON error (the login's 401) is shown as text by app.js.
import { Outcome } from '../layout';
import { SsoButton, type SsoConfig } from './sso';

export function SignIn({ redirect, sso = null }: { redirect: string; sso?: SsoConfig | null }) {
  return (
    <section class="card narrow" aria-labelledby="login-title">
      <h1 id="login-title">Sign in to Bindery</h1>
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
        <label for="login-name">Username or e-mail</label>
        <input id="login-name" name="login" autocomplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit" id="submit" class="primary">
          Sign in
        </button>
        <Outcome id="error" />
      </form>
      {/* mail (issue 47): the way to a reset link, while this server sends mail */}
      <div id="forgot" hx-get="/login/forgot-link" hx-trigger="load" hx-swap="outerHTML" />
    </section>
  );
}

export function FirstRun() {
  return (
    <section class="card narrow" aria-labelledby="setup-title">
      <h1 id="setup-title">Welcome to Bindery</h1>
      <p>No account exists yet. Create the administrator: this account manages libraries and users.</p>
      <form id="setup" method="post" action="/api/auth/register" hx-post="/api/auth/register" hx-target="#error" hx-swap="innerHTML" hx-disabled-elt="find button">
        <label for="setup-username">Username</label>
        <input id="setup-username" name="username" autocomplete="username" minlength={3} maxlength={50} required />
        <label for="setup-email">E-mail</label>
        <input id="setup-email" name="email" type="email" autocomplete="email" required />
        <label for="setup-password">Password</label>
        <input id="setup-password" name="password" type="password" autocomplete="new-password" required />
        <button type="submit" id="create-admin" class="primary">
          Create the administrator
        </button>
        <Outcome id="error" />
      </form>
    </section>
  );
}
