// Devices: the caller's reading devices (rename, remove, a sync key for KOReader's own Progress
// sync, shelves, what waits in each one's queue) and how to add one: the KOReader plugin and its
// setup steps, and reader apps' OPDS address and key. Every write is the API's own route.
import { type MessageKey, useI18n } from '../i18n';
import { Outcome } from '../layout';
import { Sentence } from './slot';

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

const ACTIONS: Record<QueueRow['action'], MessageKey> = { download: 'devices.queue.download', remove: 'devices.queue.remove', progress: 'devices.queue.progress' };

/** A day in the reader's language ("never" when there is none). */
function useDay(): (iso: string | null) => string {
  const { t, date } = useI18n();
  return (iso) => (iso ? date(iso, { dateStyle: 'medium' }) : t('devices.never'));
}

export function Devices(p: { devices: DeviceDetail[]; collections: CollectionName[]; origin: string; opdsKey: { exists: boolean; created_at: string | null } }) {
  const { t } = useI18n();
  const when = useDay();
  return (
    <>
      <h1>{t('devices.heading')}</h1>
      {p.devices.length === 0 ? (
        <p id="no-devices">{t('devices.none')}</p>
      ) : (
        <ul class="plain devices" id="devices">
          {p.devices.map((d) => (
            <DeviceCard key={d.device.id} d={d} collections={p.collections} />
          ))}
        </ul>
      )}
      <section class="card" aria-labelledby="koreader-title">
        <h2 id="koreader-title">{t('devices.koreader.heading')}</h2>
        <ol class="steps">
          <li>
            <Sentence
              t={t}
              k="devices.koreader.step1"
              slots={{ plugin: <a href="/api/koreader/plugin">{t('devices.koreader.plugin')}</a>, folder: <code>bindery.koplugin</code> }}
            />
          </li>
          <li>
            <Sentence t={t} k="devices.koreader.step2" slots={{ kobo: <code>.adds/koreader/plugins/</code>, kindle: <code>koreader/plugins/</code> }} />
          </li>
          <li>
            <Sentence
              t={t}
              k="devices.koreader.step3"
              slots={{
                server: (
                  <code id="server-address" data-origin="">
                    {p.origin || '/'}
                  </code>
                ),
              }}
            />
          </li>
          <li>{t('devices.koreader.step4')}</li>
        </ol>
        <p class="muted">{t('devices.koreader.noPlugin')}</p>
      </section>
      <section class="card" aria-labelledby="kobo-title">
        <h2 id="kobo-title">{t('devices.kobo.heading')}</h2>
        <p>{t('devices.kobo.intro')}</p>
        <form hx-post="/devices/kobo" hx-target="#kobo-outcome">
          <label for="kobo-name">{t('devices.name')}</label>
          <input id="kobo-name" name="name" required maxlength={100} placeholder="Kobo Libra" />
          <label for="kobo-books">{t('devices.kobo.books')}</label>
          <select id="kobo-books" name="books">
            <option value="all">{t('devices.kobo.all')}</option>
            <option value="shelves">{t('devices.kobo.shelvesNew')}</option>
          </select>
          <button type="submit" class="primary" id="add-kobo">
            {t('devices.kobo.make')}
          </button>
        </form>
        <Outcome id="kobo-outcome" />
      </section>
      <section class="card" aria-labelledby="opds-title">
        <h2 id="opds-title">{t('devices.opds.heading')}</h2>
        <p>
          <Sentence
            t={t}
            k="devices.opds.address"
            slots={{
              address: (
                <code id="opds-address" data-origin="/opds">
                  {`${p.origin}/opds`}
                </code>
              ),
            }}
          />
        </p>
        <p id="opds-key-state">{p.opdsKey.exists ? t('devices.opds.have', { day: when(p.opdsKey.created_at) }) : t('devices.opds.haveNone')}</p>
        <p class="muted">{t('devices.opds.why')}</p>
        <form hx-post="/devices/opds-key" hx-target="#opds-key-outcome">
          <button type="submit" class="primary" id="make-opds-key">
            {p.opdsKey.exists ? t('devices.opds.replace') : t('devices.opds.make')}
          </button>
        </form>
        {p.opdsKey.exists && (
          <form hx-post="/devices/opds-key/revoke" hx-target="#opds-key-outcome">
            <button type="submit" class="danger" id="revoke-opds-key">
              {t('devices.opds.revoke')}
            </button>
          </form>
        )}
        <Outcome id="opds-key-outcome" />
      </section>
    </>
  );
}

function DeviceCard({ d, collections }: { d: DeviceDetail; collections: CollectionName[] }) {
  const { t } = useI18n();
  const when = useDay();
  const dev = d.device;
  const base = `/devices/${dev.id}`;
  const id = (s: string) => `${s}-${dev.id}`;
  const onShelf = new Set(d.shelves.map((s) => s.collection_id));
  return (
    <li class="card device" data-device={dev.name} data-device-id={dev.id}>
      <h2 class="device-name">{dev.name}</h2>
      <dl class="meta">
        <dt>{t('devices.kind')}</dt>
        <dd>{[dev.client, dev.model].filter((x) => x).join(', ') || t('devices.kind.unknown')}</dd>
        <dt>{t('devices.state')}</dt>
        <dd class="device-state">{dev.status === 'active' ? t('devices.state.active') : t('devices.state.awaiting')}</dd>
        {!dev.kobo && <dt>{t('devices.syncKey')}</dt>}
        {!dev.kobo && <dd>{dev.sync_key_issued_at ? t('devices.syncKey.made', { day: when(dev.sync_key_issued_at) }) : t('devices.syncKey.none')}</dd>}
      </dl>
      {dev.kobo && (
        <form hx-post={`${base}/kobo`} hx-target={`#${id('kobo-outcome')}`}>
          <label for={id('kobo-books')}>{t('devices.kobo.booksThis')}</label>
          <select id={id('kobo-books')} name="books">
            <option value="all" selected={dev.kobo.books === 'all'}>
              {t('devices.kobo.all')}
            </option>
            <option value="shelves" selected={dev.kobo.books === 'shelves'}>
              {t('devices.kobo.shelves')}
            </option>
          </select>
          <button type="submit" id={id('save-kobo')}>
            {t('devices.save')}
          </button>
          <Outcome id={id('kobo-outcome')} />
        </form>
      )}
      <h3>{t('devices.shelves')}</h3>
      {d.shelves.length === 0 ? (
        <p class="muted">{t('devices.shelves.none')}</p>
      ) : (
        <ul class="plain shelves">
          {d.shelves.map((s) => (
            <li key={s.collection_id}>
              <form hx-post={`${base}/shelves/${s.collection_id}/delete`} hx-target={`#${id('shelf-outcome')}`} class="row">
                <span class="shelf-name">{s.name ?? t('devices.shelves.gone')}</span>
                <button type="submit">{s.name === null ? t('devices.shelves.takeGone') : t('devices.shelves.take', { name: s.name })}</button>
              </form>
            </li>
          ))}
        </ul>
      )}
      {collections.some((c) => !onShelf.has(c.id)) && (
        <form hx-post={`${base}/shelves`} hx-target={`#${id('shelf-outcome')}`}>
          <label for={id('shelf')}>{t('devices.shelves.put')}</label>
          <select id={id('shelf')} name="collection_id">
            {collections
              .filter((c) => !onShelf.has(c.id))
              .map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
          </select>
          <button type="submit">{t('devices.shelves.add')}</button>
        </form>
      )}
      <Outcome id={id('shelf-outcome')} />
      <h3>{t('devices.queue.heading')}</h3>
      {d.queue.length === 0 ? (
        <p class="muted">{t('devices.queue.none')}</p>
      ) : (
        <ul class="plain queue">
          {d.queue.map((q) => (
            <li key={q.id} class={`queue-entry queue-${q.status}`}>
              <span>{t(ACTIONS[q.action], { what: q.title ?? (q.media_item_id ? t('devices.queue.aBook') : t('devices.queue.allBooks')) })}</span>
              <span class="muted">{` (${q.reason})`}</span>
              {q.status === 'failed' && <span class="queue-error">{` ${t('devices.queue.failed', { error: q.last_error ?? t('devices.queue.onDevice') })}`}</span>}
              <span class="row">
                {q.status === 'failed' && (
                  <button type="button" hx-post={`/devices/queue/${q.id}/retry`} hx-target={`#${id('queue-outcome')}`}>
                    {t('devices.queue.retry')}
                  </button>
                )}
                <button type="button" hx-post={`/devices/queue/${q.id}/delete`} hx-target={`#${id('queue-outcome')}`}>
                  {t('devices.queue.drop')}
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      {d.queue.length > 0 && (
        <form hx-post={`${base}/queue/clear`} hx-target={`#${id('queue-outcome')}`}>
          <button type="submit">{t('devices.queue.clear')}</button>
        </form>
      )}
      <Outcome id={id('queue-outcome')} />
      <details>
        <summary>{t('devices.change', { name: dev.name })}</summary>
        <form hx-post={`${base}/rename`} hx-target={`#${id('rename-outcome')}`}>
          <label for={id('rename')}>{t('devices.name')}</label>
          <input id={id('rename')} name="name" value={dev.name} required maxlength={100} />
          <button type="submit" id={id('save')}>
            {t('devices.rename')}
          </button>
          <Outcome id={id('rename-outcome')} />
        </form>
        <form hx-post={`${base}/sync-key`} hx-target={`#${id('key-outcome')}`}>
          <p class="muted">{t('devices.syncKey.why')}</p>
          <button type="submit">{dev.sync_key_issued_at ? t('devices.syncKey.makeNew') : t('devices.syncKey.make')}</button>
          <Outcome id={id('key-outcome')} />
        </form>
        {dev.kobo && (
          <form hx-post={`${base}/kobo-address`} hx-target={`#${id('kobo-address-outcome')}`}>
            <p class="muted">{t('devices.kobo.addressWhy')}</p>
            <button type="submit" id={id('kobo-address')}>
              {t('devices.kobo.newAddress')}
            </button>
            <Outcome id={id('kobo-address-outcome')} />
          </form>
        )}
        <form hx-post={`${base}/delete`} hx-target={`#${id('delete-outcome')}`}>
          <label class="inline">
            <input type="checkbox" name="confirm" value="yes" required id={id('confirm')} /> {t('devices.removeConfirm', { name: dev.name })}
          </label>
          <button type="submit" class="danger" id={id('remove')}>
            {t('devices.remove', { name: dev.name })}
          </button>
          <Outcome id={id('delete-outcome')} />
        </form>
      </details>
    </li>
  );
}

/** A sync key, shown once: what to type in KOReader's Progress sync. */
export function SyncKey({ k }: { k: { sync_key: string; kosync?: { server: string; username: string | null; password: string } } }) {
  const { t } = useI18n();
  return (
    <div class="alert alert-success" role="status">
      <p>{t('devices.syncKey.shown')}</p>
      <dl class="meta">
        <dt>{t('devices.syncKey.server')}</dt>
        <dd class="kosync-server" data-origin={k.kosync?.server.startsWith('/') ? k.kosync.server : undefined}>
          {k.kosync?.server ?? ''}
        </dd>
        <dt>{t('devices.syncKey.username')}</dt>
        <dd class="kosync-user">{k.kosync?.username ?? ''}</dd>
        <dt>{t('devices.syncKey.password')}</dt>
        <dd>
          <code class="sync-key">{k.sync_key}</code>
        </dd>
      </dl>
    </div>
  );
}

/** A reader key's catalog address, shown once. */
export function ReaderKey({ k, origin }: { k: { opds_path: string; opds_url?: string }; origin: string }) {
  const { t } = useI18n();
  return (
    <div class="alert alert-success" role="status">
      <p>{t('devices.opds.shown')}</p>
      <code class="opds-key-url" data-origin={k.opds_url ? undefined : k.opds_path}>
        {k.opds_url ?? `${origin}${k.opds_path}`}
      </code>
    </div>
  );
}

/** A Kobo's store address, shown once: the line for the device's configuration file. */
export function KoboAddress({ k }: { k: { kobo_url: string; kobo_config: { file: string; section: string; line: string } } }) {
  const { t } = useI18n();
  return (
    <div class="alert alert-success" role="status">
      <p>
        <Sentence
          t={t}
          k="devices.kobo.shown"
          slots={{ file: <code>{k.kobo_config.file}</code>, section: <code>{k.kobo_config.section}</code>, key: <code>api_endpoint=</code> }}
        />
      </p>
      <p>
        <code class="kobo-line">{k.kobo_config.line}</code>
      </p>
      <p>{t('devices.kobo.eject')}</p>
    </div>
  );
}
