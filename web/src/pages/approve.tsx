// /devices/approve/<id>: a signed-in user sees the device that asks to sync (its name, client and
// code) and approves or rejects it; approving shows, once, the sync key for KOReader's own
// Progress sync. The buttons are htmx posts to this page's own actions (approve-routes.tsx).
import { useI18n } from '../i18n';
import { Sentence } from './slot';

export interface Pending {
  id: string;
  name: string;
  client: string;
  model: string;
  status: 'pending' | 'approved' | 'rejected';
}

export const PLUGIN_PATH = '/api/koreader/plugin';

function DeviceBox({ p }: { p: Pending }) {
  const { t } = useI18n();
  return (
    <div class="card">
      <div>
        <Sentence t={t} k="approve.device" slots={{ name: <strong id="device-name">{p.name}</strong> }} />
      </div>
      <div>
        <Sentence t={t} k="approve.client" slots={{ client: <span id="device-client">{p.client}</span> }} />
        {p.model ? ` · ${p.model}` : ''}
      </div>
      <div>
        <Sentence t={t} k="approve.code" slots={{ code: <code>{p.id}</code> }} />
      </div>
    </div>
  );
}

export function Approve({ p }: { p: Pending }) {
  const { t } = useI18n();
  if (p.status !== 'pending')
    return (
      <>
        <h1>{t('approve.registration')}</h1>
        <DeviceBox p={p} />
        <p id="result" data-outcome={p.status}>
          {p.status === 'approved' ? t('approve.already.approved') : t('approve.already.rejected')}
        </p>
      </>
    );
  return (
    <>
      <h1>{t('approve.heading')}</h1>
      <p>{t('approve.intro')}</p>
      <DeviceBox p={p} />
      <div id="decision">
        <Decide id={p.id} />
      </div>
      <p id="plugin">
        <Sentence
          t={t}
          k="approve.plugin"
          slots={{
            file: (
              <a id="plugin-download" href={PLUGIN_PATH} download>
                bindery.koplugin.zip
              </a>
            ),
            folder: <code>plugins</code>,
          }}
        />
      </p>
    </>
  );
}

/** The two buttons, and the last attempt's error if there was one. */
export function Decide({ id, error }: { id: string; error?: string }) {
  const { t } = useI18n();
  const base = `/devices/approve/${encodeURIComponent(id)}`;
  return (
    <>
      <div id="actions" class="row">
        <button id="approve" type="button" class="primary" hx-post={`${base}/approve`} hx-target="#decision">
          {t('approve.approve')}
        </button>
        <button id="reject" type="button" hx-post={`${base}/reject`} hx-target="#decision">
          {t('approve.reject')}
        </button>
      </div>
      {error && (
        <p id="result" data-outcome="error" role="alert" class="alert alert-error">
          {error}
        </p>
      )}
    </>
  );
}

export function Decided(p: { approved: boolean; kosync?: { server: string; username: string | null; password: string }; kobo?: { line: string } }) {
  const { t } = useI18n();
  return (
    <>
      <p id="result" data-outcome={p.approved ? 'approved' : 'rejected'} role="status" class="alert alert-success">
        {p.approved ? t('approve.approved') : t('approve.rejected')}
      </p>
      {p.approved && p.kosync && (
        <div id="kosync" class="card">
          <p>
            <Sentence
              t={t}
              k="approve.kosync"
              slots={{
                sync: <strong>{t('approve.kosync.sync')}</strong>,
                custom: <em>{t('approve.kosync.custom')}</em>,
                server: (
                  <code id="kosync-server" data-origin={p.kosync.server.startsWith('/') ? p.kosync.server : undefined}>
                    {p.kosync.server}
                  </code>
                ),
                login: <em>{t('approve.kosync.login')}</em>,
                username: <code id="kosync-user">{p.kosync.username ?? ''}</code>,
              }}
            />
          </p>
          <p>
            <code id="sync-key">{p.kosync.password}</code>
          </p>
          <p>{t('approve.kosync.once')}</p>
        </div>
      )}
      {p.approved && p.kobo && (
        <div id="kobo" class="card">
          <p>
            <Sentence
              t={t}
              k="approve.kobo"
              slots={{ kobo: <strong>Kobo</strong>, file: <code>.kobo/Kobo/Kobo eReader.conf</code>, section: <code>[OneStoreServices]</code>, key: <code>api_endpoint=</code> }}
            />
          </p>
          <p>
            <code id="kobo-line">{p.kobo.line}</code>
          </p>
          <p>{t('approve.kobo.once')}</p>
        </div>
      )}
    </>
  );
}
