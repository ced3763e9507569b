// Devices: the caller's reading devices (rename, remove, a sync key for KOReader's own Progress
// sync, shelves, what waits in each one's queue) and how to add one: the KOReader plugin and its
// setup steps, and reader apps' OPDS address and key. Every write is the API's own route.
import { Outcome } from '../layout';

export interface DeviceRow {
  id: string;
  name: string;
  client: string;
  model: string;
  status: 'active' | 'awaiting_device';
  sync_key_issued_at: string | null;
  created_at: string;
  /** a Kobo's store settings: which books it gets, and whether it has a store address */
  kobo?: { books: 'all' | 'shelves'; address: boolean };
}
export interface Shelf {
  collection_id: string;
  name: string | null;
}
export interface QueueRow {
  id: string;
  media_item_id: string | null;
  action: 'download' | 'remove' | 'progress';
  reason: string;
  status: 'pending' | 'failed';
  last_error: string | null;
  /** the book's title, when the caller may see it */
  title?: string;
}
export interface CollectionName {
  id: string;
  name: string;
}
export interface DeviceDetail {
  device: DeviceRow;
  shelves: Shelf[];
  queue: QueueRow[];
}

const when = (iso: string | null) => (iso ? new Date(iso).toISOString().slice(0, 10) : 'never');
const ACTIONS: Record<QueueRow['action'], string> = { download: 'Put on the device', remove: 'Take off the device', progress: 'Newer position' };

export function Devices(p: { devices: DeviceDetail[]; collections: CollectionName[]; origin: string; opdsKey: { exists: boolean; created_at: string | null } }) {
  return (
    <>
      <h1>Devices</h1>
      {p.devices.length === 0 ? (
        <p id="no-devices">No device yet. Add one with the steps below.</p>
      ) : (
        <ul class="plain devices" id="devices">
          {p.devices.map((d) => (
            <DeviceCard key={d.device.id} d={d} collections={p.collections} />
          ))}
        </ul>
      )}
      <section class="card" aria-labelledby="koreader-title">
        <h2 id="koreader-title">Add a KOReader device</h2>
        <ol class="steps">
          <li>
            Download the <a href="/api/koreader/plugin">Bindery plugin for KOReader</a> (a zip with one folder, <code>bindery.koplugin</code>).
          </li>
          <li>
            Copy that folder into KOReader's plugins folder (on a Kobo <code>.adds/koreader/plugins/</code>, on a Kindle <code>koreader/plugins/</code>) and restart KOReader.
          </li>
          <li>
            In KOReader open Tools, Bindery, and enter this server:{' '}
            <code id="server-address" data-origin="">
              {p.origin || '/'}
            </code>
            . It shows an address to approve.
          </li>
          <li>Open that address here, signed in, and choose Approve. The device finishes setting itself up.</li>
        </ol>
        <p class="muted">KOReader without the plugin: approve any device, then make it a sync key below and use it as the password of KOReader's Progress sync.</p>
      </section>
      <section class="card" aria-labelledby="kobo-title">
        <h2 id="kobo-title">Add a Kobo</h2>
        <p>A Kobo e-reader syncs with Bindery as it would with the Kobo store: your books (as KEPUB), covers, reading positions, shelves and highlights.</p>
        <form hx-post="/devices/kobo" hx-target="#kobo-outcome">
          <label for="kobo-name">Name</label>
          <input id="kobo-name" name="name" required maxlength={100} placeholder="Kobo Libra" />
          <label for="kobo-books">Books it gets</label>
          <select id="kobo-books" name="books">
            <option value="all">Every book you can see</option>
            <option value="shelves">Only the collections put on it as shelves</option>
          </select>
          <button type="submit" class="primary" id="add-kobo">
            Make its address
          </button>
        </form>
        <Outcome id="kobo-outcome" />
      </section>
      <section class="card" aria-labelledby="opds-title">
        <h2 id="opds-title">Reader apps (OPDS)</h2>
        <p>
          Catalog address:{' '}
          <code id="opds-address" data-origin="/opds">
            {`${p.origin}/opds`}
          </code>{' '}
          (sign in with your username and password).
        </p>
        <p id="opds-key-state">{p.opdsKey.exists ? `You have a reader key, made ${when(p.opdsKey.created_at)}.` : 'You have no reader key.'}</p>
        <p class="muted">For apps that cannot keep a password: a reader key puts a secret in the catalog's address. Making a new one ends the old one.</p>
        <form hx-post="/devices/opds-key" hx-target="#opds-key-outcome">
          <button type="submit" class="primary" id="make-opds-key">
            {p.opdsKey.exists ? 'Replace the reader key' : 'Make a reader key'}
          </button>
        </form>
        {p.opdsKey.exists && (
          <form hx-post="/devices/opds-key/revoke" hx-target="#opds-key-outcome">
            <button type="submit" class="danger" id="revoke-opds-key">
              Revoke the reader key
            </button>
          </form>
        )}
        <Outcome id="opds-key-outcome" />
      </section>
    </>
  );
}

function DeviceCard({ d, collections }: { d: DeviceDetail; collections: CollectionName[] }) {
  const dev = d.device;
  const base = `/devices/${dev.id}`;
  const id = (s: string) => `${s}-${dev.id}`;
  const onShelf = new Set(d.shelves.map((s) => s.collection_id));
  return (
    <li class="card device" data-device={dev.name} data-device-id={dev.id}>
      <h2 class="device-name">{dev.name}</h2>
      <dl class="meta">
        <dt>Kind</dt>
        <dd>{[dev.client, dev.model].filter((x) => x).join(', ') || 'unknown'}</dd>
        <dt>State</dt>
        <dd class="device-state">{dev.status === 'active' ? 'Connected' : 'Approved, waiting for the device to collect its credential'}</dd>
        {!dev.kobo && <dt>Sync key</dt>}
        {!dev.kobo && <dd>{dev.sync_key_issued_at ? `made ${when(dev.sync_key_issued_at)}` : 'none'}</dd>}
      </dl>
      {dev.kobo && (
        <form hx-post={`${base}/kobo`} hx-target={`#${id('kobo-outcome')}`}>
          <label for={id('kobo-books')}>Books this Kobo gets</label>
          <select id={id('kobo-books')} name="books">
            <option value="all" selected={dev.kobo.books === 'all'}>
              Every book you can see
            </option>
            <option value="shelves" selected={dev.kobo.books === 'shelves'}>
              Only the collections on its shelves
            </option>
          </select>
          <button type="submit" id={id('save-kobo')}>
            Save
          </button>
          <Outcome id={id('kobo-outcome')} />
        </form>
      )}
      <h3>Shelves</h3>
      {d.shelves.length === 0 ? (
        <p class="muted">No collection is on this device.</p>
      ) : (
        <ul class="plain shelves">
          {d.shelves.map((s) => (
            <li key={s.collection_id}>
              <form hx-post={`${base}/shelves/${s.collection_id}/delete`} hx-target={`#${id('shelf-outcome')}`} class="row">
                <span class="shelf-name">{s.name ?? 'A collection that is gone'}</span>
                <button type="submit">{`Take ${s.name ?? 'it'} off`}</button>
              </form>
            </li>
          ))}
        </ul>
      )}
      {collections.some((c) => !onShelf.has(c.id)) && (
        <form hx-post={`${base}/shelves`} hx-target={`#${id('shelf-outcome')}`}>
          <label for={id('shelf')}>Put a collection on this device</label>
          <select id={id('shelf')} name="collection_id">
            {collections
              .filter((c) => !onShelf.has(c.id))
              .map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
          </select>
          <button type="submit">Add shelf</button>
        </form>
      )}
      <Outcome id={id('shelf-outcome')} />
      <h3>Waiting for the device</h3>
      {d.queue.length === 0 ? (
        <p class="muted">Nothing is waiting.</p>
      ) : (
        <ul class="plain queue">
          {d.queue.map((q) => (
            <li key={q.id} class={`queue-entry queue-${q.status}`}>
              <span>{`${ACTIONS[q.action]}: ${q.title ?? (q.media_item_id ? 'a book' : 'all books')}`}</span>
              <span class="muted">{` (${q.reason})`}</span>
              {q.status === 'failed' && <span class="queue-error">{` Failed: ${q.last_error ?? 'on the device'}`}</span>}
              <span class="row">
                {q.status === 'failed' && (
                  <button type="button" hx-post={`/devices/queue/${q.id}/retry`} hx-target={`#${id('queue-outcome')}`}>
                    Retry
                  </button>
                )}
                <button type="button" hx-post={`/devices/queue/${q.id}/delete`} hx-target={`#${id('queue-outcome')}`}>
                  Drop
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {d.queue.length > 0 && (
        <form hx-post={`${base}/queue/clear`} hx-target={`#${id('queue-outcome')}`}>
          <button type="submit">Clear the queue</button>
        </form>
      )}
      <Outcome id={id('queue-outcome')} />
      <details>
        <summary>{`Change ${dev.name}`}</summary>
        <form hx-post={`${base}/rename`} hx-target={`#${id('rename-outcome')}`}>
          <label for={id('rename')}>Name</label>
          <input id={id('rename')} name="name" value={dev.name} required maxlength={100} />
          <button type="submit" id={id('save')}>
            Rename
          </button>
          <Outcome id={id('rename-outcome')} />
        </form>
        <form hx-post={`${base}/sync-key`} hx-target={`#${id('key-outcome')}`}>
          <p class="muted">A sync key is the password KOReader's own Progress sync uses for this device. A new one ends the old one.</p>
          <button type="submit">{dev.sync_key_issued_at ? 'Make a new sync key' : 'Make a sync key'}</button>
          <Outcome id={id('key-outcome')} />
        </form>
        {dev.kobo && (
          <form hx-post={`${base}/kobo-address`} hx-target={`#${id('kobo-address-outcome')}`}>
            <p class="muted">The store address is this Kobo's only credential. A new one ends the old one: write the new line into the Kobo's configuration.</p>
            <button type="submit" id={id('kobo-address')}>
              Make a new Kobo address
            </button>
            <Outcome id={id('kobo-address-outcome')} />
          </form>
        )}
        <form hx-post={`${base}/delete`} hx-target={`#${id('delete-outcome')}`}>
          <label class="inline">
            <input type="checkbox" name="confirm" value="yes" required id={id('confirm')} /> {`Remove ${dev.name}: it stops syncing at once`}
          </label>
          <button type="submit" class="danger" id={id('remove')}>{`Remove ${dev.name}`}</button>
          <Outcome id={id('delete-outcome')} />
        </form>
      </details>
    </li>
  );
}

/** A sync key, shown once: what to type in KOReader's Progress sync. */
export function SyncKey({ k }: { k: { sync_key: string; kosync?: { server: string; username: string | null; password: string } } }) {
  return (
    <div class="alert alert-success" role="status">
      <p>Shown only now. In KOReader's Progress sync, choose Custom sync server:</p>
      <dl class="meta">
        <dt>Server</dt>
        <dd class="kosync-server" data-origin={k.kosync?.server.startsWith('/') ? k.kosync.server : undefined}>
          {k.kosync?.server ?? ''}
        </dd>
        <dt>Username</dt>
        <dd class="kosync-user">{k.kosync?.username ?? ''}</dd>
        <dt>Password</dt>
        <dd>
          <code class="sync-key">{k.sync_key}</code>
        </dd>
      </dl>
    </div>
  );
}

/** A reader key's catalog address, shown once. */
export function ReaderKey({ k, origin }: { k: { opds_path: string; opds_url?: string }; origin: string }) {
  return (
    <div class="alert alert-success" role="status">
      <p>Shown only now. Give this address to your reader app, as its catalog:</p>
      <code class="opds-key-url" data-origin={k.opds_url ? undefined : k.opds_path}>
        {k.opds_url ?? `${origin}${k.opds_path}`}
      </code>
    </div>
  );
}

/** A Kobo's store address, shown once: the line for the device's configuration file. */
export function KoboAddress({ k }: { k: { kobo_url: string; kobo_config: { file: string; section: string; line: string } } }) {
  return (
    <div class="alert alert-success" role="status">
      <p>
        Shown only now. Connect the Kobo by USB, open <code>{k.kobo_config.file}</code>, and under <code>{k.kobo_config.section}</code> replace the <code>api_endpoint=</code> line
        with:
      </p>
      <p>
        <code class="kobo-line">{k.kobo_config.line}</code>
      </p>
      <p>Eject the Kobo and sync it. The device shows in your list when you reload this page.</p>
    </div>
  );
}
