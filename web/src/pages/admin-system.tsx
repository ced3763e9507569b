// Admin: the gateway's read models (each projection's source, position and last rebuild, with a
// rebuild button: the old one keeps serving until the new one has caught up) and the system
// settings as identity stores them (read-only here).
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
      <section class="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <dl class="meta" id="settings">
          {settings.map((s) => (
            <>
              <dt>{s.key}</dt>
              <dd>{typeof s.value === 'string' ? s.value : JSON.stringify(s.value)}</dd>
            </>
          ))}
        </dl>
      </section>
    </>
  );
}
