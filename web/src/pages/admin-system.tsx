// Admin: the gateway's read models (each projection's source, position and last rebuild, with a
// rebuild button: the old one keeps serving until the new one has caught up) and the system
// settings as identity stores them, and a backup to download now.
import { Outcome } from '../layout';

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
  return (
    <>
      <h1>System</h1>
      <section class="card" aria-labelledby="projections-title">
        <h2 id="projections-title">Read models</h2>
        <table id="projections" class="stack">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Source</th>
              <th scope="col">Position</th>
              <th scope="col">Last rebuilt</th>
              <th scope="col">Rebuild</th>
            </tr>
          </thead>
          <tbody>
            {projections.map((p) => (
              <tr key={p.name} data-projection={p.name}>
                <td data-label="Name">{p.name}</td>
                <td data-label="Source">{p.source}</td>
                <td data-label="Position">{p.position}</td>
                <td data-label="Last rebuilt">{p.rebuilding ? 'rebuilding now' : p.rebuilt_at ? `${p.rebuilt_at.slice(0, 16).replace('T', ' ')} UTC` : 'never'}</td>
                <td data-label="Rebuild">
                  <button
                    type="button"
                    hx-post={`/api/admin/projections/${p.name}/rebuild`}
                    hx-target={`#rebuild-${p.name}`}
                    id={`rebuild-button-${p.name}`}
                    aria-label={`Rebuild ${p.name}`}
                  >
                    Rebuild
                  </button>
                  <Outcome id={`rebuild-${p.name}`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section class="card" aria-labelledby="backup-title">
        <h2 id="backup-title">Backup</h2>
        <p>
          A backup holds every account, library, reading position, annotation, collection and device with its Kobo and KOReader sign-in, and the settings, from one consistent
          moment; Bindery keeps running while it is made. Put it back with <code>pnpm restore &lt;file&gt;</code> into an empty data directory or database.
        </p>
        <p>
          <a class="button primary" id="backup-download" href="/api/admin/backup" download>
            Download a backup now
          </a>
        </p>
        <p class="muted">Scheduled backups: set backup_folder, backup_interval_hours and backup_keep below.</p>
      </section>
      {/* mail (issue 47): the test mail and the way to invitations (nothing while mail is off) */}
      <div id="mail-admin" hx-get="/admin/mail/card" hx-trigger="load" hx-swap="outerHTML" />
      <section class="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
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
            Save settings
          </button>
          <Outcome id="settings-outcome" />
        </form>
      </section>
    </>
  );
}

/** One setting's control: a yes/no choice, a number within its bounds, or text. */
function SettingInput({ s }: { s: Setting }) {
  const id = `setting-${s.key}`;
  if (s.type === 'boolean')
    return (
      <select id={id} name={s.key}>
        <option value="true" selected={s.value === true}>
          on
        </option>
        <option value="false" selected={s.value === false}>
          off
        </option>
      </select>
    );
  if (s.type === 'integer') return <input id={id} name={s.key} type="number" value={String(s.value)} min={s.min ?? undefined} max={s.max ?? undefined} required />;
  return <input id={id} name={s.key} value={typeof s.value === 'string' ? s.value : JSON.stringify(s.value)} />;
}
