// The profile's sessions: where the user is signed in (GET /api/auth/sessions: their own sessions
// only), this browser's marked, each other one with its "Sign out", and "Sign out everywhere else".
import { type I18n, useI18n } from '../i18n';

export interface SessionRow {
  id: string;
  client: string;
  started_at: string;
  last_used_at: string;
  expires_at: string;
  current: boolean;
}

const BROWSERS: [RegExp, string][] = [
  [/KOReader/i, 'KOReader'],
  [/Kobo/i, 'Kobo'],
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\/|FxiOS/, 'Firefox'],
  [/Chrom(e|ium)\/|CriOS|HeadlessChrome/, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Firefox on Linux" from a User-Agent (in the reader's language); "Unknown client" when it says nothing we know. */
export function clientLabel(ua: string, t: I18n['t']): string {
  const browser = BROWSERS.find(([re]) => re.test(ua))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(ua))?.[1];
  if (browser && system) return t('sessions.browserOn', { browser, system });
  return browser ?? system ?? (ua === '' ? t('sessions.unknownClient') : ua.slice(0, 40));
}

export function SessionList({ sessions, failed }: { sessions: SessionRow[]; failed?: number }) {
  const { t, date } = useI18n();
  const when = (iso: string) => date(iso, { dateStyle: 'medium', timeStyle: 'short' });
  const others = sessions.filter((s) => !s.current).length;
  return (
    <div id="sessions">
      {failed !== undefined ? (
        <p class="alert alert-error" role="alert">
          {t('sessions.failed', { status: String(failed) })}
        </p>
      ) : (
        <ul class="plain sessions" aria-label={t('sessions.label')}>
          {sessions.map((s) => (
            <li key={s.id} class="session" data-session={s.id} data-current={s.current ? 'true' : undefined}>
              <p class="session-client">
                {clientLabel(s.client, t)}
                {s.current && <strong class="session-current">{` ${t('sessions.thisBrowser')}`}</strong>}
              </p>
              <p class="muted session-times">{t('sessions.times', { started: when(s.started_at), used: when(s.last_used_at) })}</p>
              {s.client !== '' && clientLabel(s.client, t) !== s.client && <p class="muted session-agent">{s.client}</p>}
              {!s.current && (
                <form hx-post={`/profile/sessions/${s.id}/sign-out`} hx-target="#sessions-outcome">
                  <button type="submit" aria-label={t('sessions.signOutLabel', { client: clientLabel(s.client, t), started: when(s.started_at) })}>
                    {t('sessions.signOut')}
                  </button>
                </form>
              )}
            </li>
          ))}
        </ul>
      )}
      {others > 0 && (
        <form hx-post="/profile/sessions/sign-out-others" hx-target="#sessions-outcome">
          <button type="submit" class="danger" id="sign-out-others">
            {t('sessions.signOutOthers')}
          </button>
        </form>
      )}
    </div>
  );
}
