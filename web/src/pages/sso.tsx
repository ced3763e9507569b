// Single sign-on's pages (issue 47): the provider's button on the sign-in page, the page a refused
// sign-in lands on (a fixed message per reason, never the provider's words), the profile's link to
// the provider, and the app passwords an account without a password uses for reader apps and devices.
import { Outcome } from '../layout';

export interface SsoConfig {
  enabled: boolean;
  only: boolean;
  label: string;
}

export const startHref = (redirect: string) => `/api/auth/oidc/start?${new URLSearchParams({ redirect })}`;

/** The provider's button (a link: the sign-in is a navigation to the provider). */
export function SsoButton({ sso, redirect }: { sso: SsoConfig | null; redirect: string }) {
  if (!sso?.enabled) return null;
  return (
    <div class="sso">
      <a class="button primary" id="sso-sign-in" href={startHref(redirect)}>
        {sso.label}
      </a>
      {!sso.only && <p class="muted">or sign in with your password:</p>}
    </div>
  );
}

export function SsoProblem({ message, sso }: { message: string; sso: SsoConfig | null }) {
  return (
    <section class="card narrow" aria-labelledby="sso-problem-title">
      <h1 id="sso-problem-title">You are not signed in</h1>
      <p class="alert alert-error" id="sso-problem" role="alert">
        {message}
      </p>
      <ul>
        {sso?.enabled && (
          <li>
            <a href={startHref('/dashboard')} id="sso-again">
              {`Try again: ${sso.label}`}
            </a>
          </li>
        )}
        {!sso?.only && (
          <li>
            <a href="/login" id="password-sign-in">
              Sign in with your password
            </a>
          </li>
        )}
      </ul>
    </section>
  );
}

export interface SsoLinks {
  enabled: boolean;
  label: string;
  linked: boolean;
  linked_at: string | null;
  has_password: boolean;
}

const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '');

/** The profile's single sign-on card: linked or not, the step that links, and the app passwords. */
export function SsoLinkCard({ links }: { links: SsoLinks }) {
  return (
    <section class="card" aria-labelledby="sso-title" id="sso">
      <h2 id="sso-title">Single sign-on</h2>
      {links.linked ? (
        <p id="sso-state">{`Your account is linked to the sign-in provider (since ${day(links.linked_at)}): "${links.label}" on the sign-in page signs you in.`}</p>
      ) : (
        <>
          <p id="sso-state">Your account is not linked to the sign-in provider. Linking it lets "{links.label}" on the sign-in page sign you in to this account.</p>
          <form hx-post="/api/auth/oidc/link" hx-swap="none">
            <button type="submit" class="primary" id="sso-link">
              Link your account
            </button>
          </form>
        </>
      )}
      <p>
        <a href="/profile/app-passwords" id="app-passwords-link">
          {links.has_password ? 'App passwords for reader apps and devices' : 'App passwords: reader apps and devices need one, as you have no password here'}
        </a>
      </p>
      <Outcome id="sso-outcome" />
    </section>
  );
}

/**
 * What stands in for a password in reader apps and devices: the reader key (an OPDS address with
 * its secret), the KOReader plugin's pairing, a device's sync key for KOReader's own Progress sync,
 * and a Kobo's store address. Each is made on the devices page, which this page leads to.
 */
export function AppPasswords({ origin, hasPassword, opdsKey }: { origin: string; hasPassword: boolean; opdsKey: { exists: boolean; created_at: string | null } }) {
  return (
    <>
      <h1>App passwords</h1>
      <p>
        {hasPassword
          ? 'Reader apps and devices can use your password, but a credential of their own is safer: it works only there, and you can end it without changing your password.'
          : 'You sign in through the single sign-on provider and have no password on this server. Reader apps and devices cannot use the provider: give each one of these credentials instead.'}
      </p>
      <section class="card" aria-labelledby="app-opds-title">
        <h2 id="app-opds-title">Reader apps (OPDS)</h2>
        <p>
          A reader key puts a secret in the catalog's address: give the app this address, with your key in place of <code>KEY</code>, and no user name or password.
        </p>
        <p>
          <code id="app-opds-address">{`${origin}/opds/key/KEY`}</code>
        </p>
        <p id="app-opds-state">{opdsKey.exists ? `You have a reader key, made ${day(opdsKey.created_at)}.` : 'You have no reader key yet.'}</p>
        <form hx-post="/devices/opds-key" hx-target="#app-opds-outcome">
          <button type="submit" class="primary" id="app-make-opds-key">
            {opdsKey.exists ? 'Replace the reader key' : 'Make a reader key'}
          </button>
        </form>
        <Outcome id="app-opds-outcome" />
      </section>
      <section class="card" aria-labelledby="app-koreader-title">
        <h2 id="app-koreader-title">KOReader</h2>
        <p>
          The Bindery plugin for KOReader pairs the device with your account: you approve it once, on the devices page, and it never needs a password. KOReader's own Progress sync
          instead takes a device's sync key as its password.
        </p>
        <p>
          <a href="/devices" id="app-devices">
            Pair a device or make its sync key on the devices page
          </a>
        </p>
      </section>
      <section class="card" aria-labelledby="app-kobo-title">
        <h2 id="app-kobo-title">Kobo</h2>
        <p>A Kobo syncs through its own store address with a token in it, made on the devices page: it needs no password either.</p>
      </section>
    </>
  );
}
