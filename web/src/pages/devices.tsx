// Your devices: what is connected (name, client, model, whether it has collected its credential),
// rename one or remove it (the device-sync service decides), and how to connect one: the KOReader
// plugin download and the OPDS catalog address.
import { Outcome } from '../layout';

export interface DeviceRow {
  id: string;
  name: string;
  client: string;
  model: string;
  status: 'active' | 'awaiting_device';
  created_at: string;
}

export function Devices({ devices, origin }: { devices: DeviceRow[]; origin: string }) {
  return (
    <>
      <h1>Devices</h1>
      {devices.length === 0 ? (
        <p id="no-devices">No device is connected yet.</p>
      ) : (
        <ul class="plain" id="devices">
          {devices.map((d) => (
            <li key={d.id} class="card" data-device={d.id}>
              <h2 class="device-name">{d.name}</h2>
              <p class="muted">
                {d.client}
                {d.model ? ` · ${d.model}` : ''} · {d.status === 'active' ? 'connected' : 'approved, waiting for the device'} · since {d.created_at.slice(0, 10)}
              </p>
              <form class="inline-form" hx-put={`/api/devices/${d.id}`} hx-ext="bindery-json" hx-target={`#device-outcome-${d.id}`} data-reload>
                <label for={`rename-${d.id}`}>Name</label>
                <input id={`rename-${d.id}`} name="name" value={d.name} maxlength={100} required class="grow" />
                <button type="submit" id={`save-${d.id}`}>
                  Rename
                </button>
                <button type="button" hx-delete={`/api/devices/${d.id}`} hx-target={`#device-outcome-${d.id}`} data-reload id={`remove-${d.id}`} aria-label={`Remove ${d.name}`}>
                  Remove
                </button>
                <Outcome id={`device-outcome-${d.id}`} />
              </form>
            </li>
          ))}
        </ul>
      )}
      <section class="card" aria-labelledby="connect-title">
        <h2 id="connect-title">Connect a device</h2>
        <p>
          <strong>KOReader:</strong> download the <a href="/api/koreader/plugin">Bindery plugin</a> (bindery.koplugin.zip), unzip it into KOReader's <code>plugins</code> folder,
          and start the registration from its menu; you approve the device here in the browser.
        </p>
        <p>
          <strong>OPDS apps</strong> (KOReader, Moon+ Reader, Panels, Chunky, Thorium): add the catalog <code id="opds-url">{`${origin}/opds`}</code> with your username and
          password.
        </p>
      </section>
    </>
  );
}
