// Admin: the gateway's read models (each projection's source, position and last rebuild, with a
// rebuild button: the old one keeps serving until the new one has caught up) and the system
// settings as identity stores them, and a backup to download now.
import { useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Sentence } from './slot';

export interface ProjectionRow {
  name: string;
  source: string;
  position: number;
  rebuilding: boolean;
  rebuilt_at: string | null;
}
export interface Setting {
  key: string;
  value: unknown;
  type?: 'integer' | 'boolean' | 'string';
  min?: number | null;
  max?: number | null;
  description?: string;
}

export function AdminSystem({ projections, settings }: { projections: ProjectionRow[]; settings: Setting[] }) {
  const { t, number, date } = useI18n();
  return (
    <>
      <h1>{t('sys.heading')}</h1>
      <section class="card" aria-labelledby="projections-title">
        <h2 id="projections-title">{t('sys.readModels')}</h2>
        <table id="projections" class="stack">
          <thead>
            <tr>
              <th scope="col">{t('sys.name')}</th>
              <th scope="col">{t('sys.source')}</th>
              <th scope="col">{t('sys.position')}</th>
              <th scope="col">{t('sys.lastRebuilt')}</th>
              <th scope="col">{t('sys.rebuild')}</th>
            </tr>
          </thead>
          <tbody>
            {projections.map((p) => (
              <tr key={p.name} data-projection={p.name}>
                <td data-label={t('sys.name')}>{p.name}</td>
                <td data-label={t('sys.source')}>{p.source}</td>
                <td data-label={t('sys.position')}>{number(p.position)}</td>
                <td data-label={t('sys.lastRebuilt')}>
                  {p.rebuilding ? t('sys.rebuildingNow') : p.rebuilt_at ? date(p.rebuilt_at, { dateStyle: 'medium', timeStyle: 'short' }) : t('sys.never')}
                </td>
                <td data-label={t('sys.rebuild')}>
                  <button
                    type="button"
                    hx-post={`/api/admin/projections/${p.name}/rebuild`}
                    hx-target={`#rebuild-${p.name}`}
                    id={`rebuild-button-${p.name}`}
                    aria-label={t('sys.rebuildLabel', { name: p.name })}
                  >
                    {t('sys.rebuild')}
                  </button>
                  <Outcome id={`rebuild-${p.name}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section class="card" aria-labelledby="backup-title">
        <h2 id="backup-title">{t('sys.backup.heading')}</h2>
        <p>
          {t('sys.backup.intro')} <Sentence t={t} k="sys.backup.restore" slots={{ command: <code>pnpm restore &lt;file&gt;</code> }} />
        </p>
        <p>
          <a class="button primary" id="backup-download" href="/api/admin/backup" download>
            {t('sys.backup.download')}
          </a>
        </p>
        <p class="muted">{t('sys.backup.scheduled')}</p>
      </section>
      {/* mail (issue 47): the test mail and the way to invitations (nothing while mail is off) */}
      <div id="mail-admin" hx-get="/admin/mail/card" hx-trigger="load" hx-swap="outerHTML" />
      <section class="card" aria-labelledby="settings-title">
        <h2 id="settings-title">{t('sys.settings')}</h2>
        <form id="settings-form" hx-post="/admin/system/settings" hx-target="#settings-outcome">
          <dl class="meta" id="settings">
            {settings.map((s) => (
              <>
                <dt>
                  <label for={`setting-${s.key}`}>{s.key}</label>
                </dt>
                <dd>
                  <SettingInput s={s} />
                  {s.description && <span class="muted setting-help">{s.description}</span>}
                </dd>
              </>
            ))}
          </dl>
          <button type="submit" class="primary" id="save-settings">
            {t('sys.saveSettings')}
          </button>
          <Outcome id="settings-outcome" />
        </form>
      </section>
    </>
  );
}

/** One setting's control: a yes/no choice, a number within its bounds, or text. */
function SettingInput({ s }: { s: Setting }) {
  const { t } = useI18n();
  const id = `setting-${s.key}`;
  if (s.type === 'boolean')
    return (
      <select id={id} name={s.key}>
        <option value="true" selected={s.value === true}>
          {t('sys.on')}
        </option>
        <option value="false" selected={s.value === false}>
          {t('sys.off')}
        </option>
      </select>
    );
  if (s.type === 'integer') return <input id={id} name={s.key} type="number" value={String(s.value)} min={s.min ?? undefined} max={s.max ?? undefined} required />;
  return <input id={id} name={s.key} value={typeof s.value === 'string' ? s.value : JSON.stringify(s.value)} />;
}
