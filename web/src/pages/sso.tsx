// Single sign-on's pages (issue 47): the provider's button on the sign-in page, the page a refused
// sign-in lands on (a fixed message per reason, never the provider's words), the profile's link to
// the provider, and the app passwords an account without a password uses for reader apps and devices.
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Sentence } from './slot';

export interface SsoConfig {
  enabled: boolean;
  only: boolean;
  label: string;
}

export const startHref = (redirect: string) => `/api/auth/oidc/start?${new URLSearchParams({ redirect })}`;

/** The provider's button (a link: the sign-in is a navigation to the provider). */
export function SsoButton({ sso, redirect }: { sso: SsoConfig | null; redirect: string }) {
  const { t } = useI18n();
  if (!sso?.enabled) return null;
  return (
    <div class="sso">
      <a class="button primary" id="sso-sign-in" href={startHref(redirect)}>
        {sso.label}
      </a>
      {!sso.only && <p class="muted">{t('sso.orPassword')}</p>}
    </div>
  );
}

export function SsoProblem({ message, sso }: { message: string; sso: SsoConfig | null }) {
  const { t } = useI18n();
  return (
    <section class="card narrow" aria-labelledby="sso-problem-title">
      <h1 id="sso-problem-title">{t('sso.problem.heading')}</h1>
      <p class="alert alert-error" id="sso-problem" role="alert">
        {message}
      </p>
      <ul>
        {sso?.enabled && (
          <li>
            <a href={startHref('/dashboard')} id="sso-again">
              {t('sso.problem.again', { label: sso.label })}
            </a>
          </li>
        )}
        {!sso?.only && (
          <li>
            <a href="/login" id="password-sign-in">
              {t('sso.problem.password')}
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

/** A day in the reader's language (nothing when there is none). */
function useDay(): (iso: string | null) => string {
  const { date } = useI18n();
  return (iso) => (iso ? date(iso, { dateStyle: 'medium' }) : '');
}

/** The profile's single sign-on card: linked or not, the step that links, and the app passwords. */
export function SsoLinkCard({ links }: { links: SsoLinks }) {
  const { t } = useI18n();
  const day = useDay();
  return (
    <section class="card" aria-labelledby="sso-title" id="sso">
      <h2 id="sso-title">{t('sso.card.heading')}</h2>
      {links.linked ? (
        <p id="sso-state">{t('sso.card.linked', { day: day(links.linked_at), label: links.label })}</p>
      ) : (
        <>
          <p id="sso-state">{t('sso.card.notLinked', { label: links.label })}</p>
          <form hx-post="/api/auth/oidc/link" hx-swap="none">
            <button type="submit" class="primary" id="sso-link">
              {t('sso.card.link')}
            </button>
          </form>
        </>
      )}
      <p>
        <a href="/profile/app-passwords" id="app-passwords-link">
          {links.has_password ? t('sso.card.apps') : t('sso.card.appsNoPassword')}
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
  const { t } = useI18n();
  const day = useDay();
  return (
    <>
      <h1>{t('sso.apps.heading')}</h1>
      <p>{hasPassword ? t('sso.apps.intro') : t('sso.apps.introNoPassword')}</p>
      <section class="card" aria-labelledby="app-opds-title">
        <h2 id="app-opds-title">{t('devices.opds.heading')}</h2>
        <p>
          <Sentence t={t} k="sso.apps.opds" slots={{ key: <code>KEY</code> }} />
        </p>
        <p>
          <code id="app-opds-address">{`${origin}/opds/key/KEY`}</code>
        </p>
        <p id="app-opds-state">{opdsKey.exists ? t('devices.opds.have', { day: day(opdsKey.created_at) }) : t('sso.apps.noKeyYet')}</p>
        <form hx-post="/devices/opds-key" hx-target="#app-opds-outcome">
          <button type="submit" class="primary" id="app-make-opds-key">
            {opdsKey.exists ? t('devices.opds.replace') : t('devices.opds.make')}
          </button>
        </form>
        <Outcome id="app-opds-outcome" />
      </section>
      <section class="card" aria-labelledby="app-koreader-title">
        <h2 id="app-koreader-title">KOReader</h2>
        <p>{t('sso.apps.koreader')}</p>
        <p>
          <a href="/devices" id="app-devices">
            {t('sso.apps.devicesLink')}
          </a>
        </p>
      </section>
      <section class="card" aria-labelledby="app-kobo-title">
        <h2 id="app-kobo-title">Kobo</h2>
        <p>{t('sso.apps.kobo')}</p>
      </section>
    </>
  );
}
