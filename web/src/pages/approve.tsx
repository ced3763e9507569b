// /devices/approve/<id>: a signed-in user sees the device that asks to sync (its name, client and
// code) and approves or rejects it; approving shows, once, the sync key for KOReader's own
// Progress sync. The buttons are htmx posts to this page's own actions (approve-routes.tsx).
export interface Pending {
  id: string;
  name: string;
  client: string;
  model: string;
  status: 'pending' | 'approved' | 'rejected';
}

export const PLUGIN_PATH = '/api/koreader/plugin';
export const MISSING = 'This device registration does not exist or has expired. Start the registration on the device again.';

function DeviceBox({ p }: { p: Pending }) {
  return (
    <div class="card">
      <div>
        Device: <strong id="device-name">{p.name}</strong>
      </div>
      <div>
        Client: <span id="device-client">{p.client}</span>
        {p.model ? ` · ${p.model}` : ''}
      </div>
      <div>
        Code: <code>{p.id}</code>
      </div>
    </div>
  );
}

export function Approve({ p }: { p: Pending }) {
  if (p.status !== 'pending')
    return (
      <>
        <h1>Device registration</h1>
        <DeviceBox p={p} />
        <p id="result" data-outcome={p.status}>{`This device was already ${p.status}.`}</p>
      </>
    );
  return (
    <>
      <h1>Approve this device?</h1>
      <p>A device asks to sync with your Bindery library. Approve it only if you started this on your own device.</p>
      <DeviceBox p={p} />
      <div id="decision">
        <Decide id={p.id} />
      </div>
      <p id="plugin">
        The Bindery plugin for KOReader:{' '}
        <a id="plugin-download" href={PLUGIN_PATH} download>
          bindery.koplugin.zip
        </a>{' '}
        (unzip it into KOReader's <code>plugins</code> folder).
      </p>
    </>
  );
}

/** The two buttons, and the last attempt's error if there was one. */
export function Decide({ id, error }: { id: string; error?: string }) {
  const base = `/devices/approve/${encodeURIComponent(id)}`;
  return (
    <>
      <div id="actions" class="row">
        <button id="approve" type="button" class="primary" hx-post={`${base}/approve`} hx-target="#decision">
          Approve
        </button>
        <button id="reject" type="button" hx-post={`${base}/reject`} hx-target="#decision">
          Reject
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
  return (
    <>
      <p id="result" data-outcome={p.approved ? 'approved' : 'rejected'} role="status" class="alert alert-success">
        {p.approved ? 'Device approved. It will finish setting itself up within a few seconds.' : 'Device rejected.'}
      </p>
      {p.approved && p.kosync && (
        <div id="kosync" class="card">
          <p>
            For KOReader's built-in <strong>Progress sync</strong> (no plugin): set <em>Custom sync server</em> to{' '}
            <code id="kosync-server" data-origin={p.kosync.server.startsWith('/') ? p.kosync.server : undefined}>
              {p.kosync.server}
            </code>
            , then <em>Login</em> with the username <code id="kosync-user">{p.kosync.username ?? ''}</code> and this sync key as the password:
          </p>
          <p>
            <code id="sync-key">{p.kosync.password}</code>
          </p>
          <p>It is shown only this once and works until the device is deleted or given a new key.</p>
        </div>
      )}
      {p.approved && p.kobo && (
        <div id="kobo" class="card">
          <p>
            For a <strong>Kobo</strong>: connect it by USB, open <code>.kobo/Kobo/Kobo eReader.conf</code>, and under <code>[OneStoreServices]</code> replace the{' '}
            <code>api_endpoint=</code> line with:
          </p>
          <p>
            <code id="kobo-line">{p.kobo.line}</code>
          </p>
          <p>It is shown only this once; a new address can be made from the device's settings (the old one then stops working).</p>
        </div>
      )}
    </>
  );
}
