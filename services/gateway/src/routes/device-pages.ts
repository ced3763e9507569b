// Browser pages: /devices/approve/<id> (a signed-in user sees the device's name and approves or
// rejects it) and a minimal /login that signs in through POST /api/auth/login and goes back. The
// buttons send JSON with X-Requested-With (cookie writes must prove they come from our page); the
// pages may not be framed (no clickjacking of the Approve button) and run only their own script.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../http/reply';
import { param } from './reading-progress';
import type { DeviceDeps } from './devices';
import { PLUGIN_DOWNLOAD, PLUGIN_ZIP } from './koreader-download';

interface Pending {
  id: string;
  name: string;
  client: string;
  model: string;
  status: 'pending' | 'approved' | 'rejected';
  device_id: string | null;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1b26}
h1{font-size:1.4rem}.device{border:1px solid #c0caf5;border-radius:.5rem;padding:1rem;margin:1rem 0}
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem;border-radius:.4rem;border:1px solid #7aa2f7;cursor:pointer}
#approve{background:#7aa2f7;color:#fff}label{display:block;margin:.6rem 0 .2rem}input{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}
#result{margin-top:1rem;font-weight:600}`;

function page(reply: FastifyReply, status: number, title: string, body: string, script = '', bodyAttrs = ''): FastifyReply {
  const nonce = randomBytes(16).toString('base64');
  return reply
    .code(status)
    .header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · Bindery</title><style nonce="${nonce}">${STYLE}</style></head><body${bodyAttrs}>${body}${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`,
    );
}

/** Only a path of this server: no scheme, no `//host`, no backslash tricks. */
export function safeNext(v: unknown): string {
  return typeof v === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(v) && v.length <= 500 ? v : '/';
}

const APPROVE_SCRIPT = `
const id = document.body.dataset.registration;
const result = document.getElementById('result');
async function decide(action) {
  for (const b of document.querySelectorAll('button')) b.disabled = true;
  const r = await fetch('/api/devices/' + encodeURIComponent(id) + '/' + action, {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'fetch' }, body: '{}'
  });
  const body = await r.json().catch(() => ({}));
  if (r.ok) {
    result.textContent = action === 'approve' ? 'Device approved. It will finish setting itself up within a few seconds.' : 'Device rejected.';
    document.getElementById('actions').remove();
    if (action === 'approve' && body.kosync) {
      document.getElementById('kosync-server').textContent = new URL(body.kosync.server, location.href).href;
      document.getElementById('kosync-user').textContent = body.kosync.username || '';
      document.getElementById('sync-key').textContent = body.kosync.password;
      document.getElementById('kosync').hidden = false;
    }
    if (action === 'approve' && body.kobo_url) {
      document.getElementById('kobo-line').textContent = body.kobo_config.line;
      document.getElementById('kobo').hidden = false;
    }
  } else {
    result.textContent = body.error || ('Failed (' + r.status + ')');
    for (const b of document.querySelectorAll('button')) b.disabled = false;
  }
  result.dataset.outcome = r.ok ? (action === 'approve' ? 'approved' : 'rejected') : 'error';
}
document.getElementById('approve').addEventListener('click', () => decide('approve'));
document.getElementById('reject').addEventListener('click', () => decide('reject'));
`;

const LOGIN_SCRIPT = `
const form = document.getElementById('login');
const error = document.getElementById('error');
form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  error.textContent = '';
  const r = await fetch('/api/auth/login', {
    method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'fetch' },
    body: JSON.stringify({ login: form.login.value, password: form.password.value })
  });
  if (r.ok) { location.assign(form.dataset.next); return; }
  const body = await r.json().catch(() => ({}));
  error.textContent = body.error || ('Sign-in failed (' + r.status + ')');
});
`;

export function devicePages(app: FastifyInstance, { auth, devices }: DeviceDeps): void {
  app.get('/login', async (req: FastifyRequest, reply) => {
    const next = safeNext((req.query as Record<string, unknown>).next);
    return page(
      reply,
      200,
      'Sign in',
      `<h1>Sign in to Bindery</h1><form id="login" data-next="${escapeHtml(next)}">
<label for="login-name">Username or e-mail</label><input id="login-name" name="login" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<p><button type="submit" id="submit">Sign in</button></p><p id="error" role="alert"></p></form>`,
      LOGIN_SCRIPT,
    );
  });

  app.get('/devices/approve/:id', async (req, reply) => {
    await auth.optionalUser(req);
    const id = param(req);
    if (!req.caller) return reply.redirect(`/login?next=${encodeURIComponent(`/devices/approve/${id}`)}`, 302);
    const r = await devices('pending-get', { caller: req.caller, id });
    if (!r.ok) {
      const status = r.error.code === 'not_found' ? 404 : r.error.code === 'service_unavailable' ? 503 : 400;
      const text = status === 404 ? 'This device registration does not exist or has expired. Start the registration on the device again.' : r.error.message;
      return page(reply, status, 'Device registration', `<h1>Device registration</h1><p id="result" data-outcome="missing">${escapeHtml(text)}</p>`);
    }
    const p = r.value as Pending;
    const device = `<div class="device"><div>Device: <strong id="device-name">${escapeHtml(p.name)}</strong></div><div>Client: <span id="device-client">${escapeHtml(p.client)}</span>${p.model ? ` · ${escapeHtml(p.model)}` : ''}</div><div>Code: <code>${escapeHtml(p.id)}</code></div></div>`;
    if (p.status !== 'pending') {
      return page(reply, 200, 'Device registration', `<h1>Device registration</h1>${device}<p id="result" data-outcome="${p.status}">This device was already ${p.status}.</p>`);
    }
    return page(
      reply,
      200,
      'Approve device',
      `<h1>Approve this device?</h1><p>A device asks to sync with your Bindery library. Approve it only if you started this on your own device.</p>${device}
<div id="actions"><button id="approve" type="button">Approve</button><button id="reject" type="button">Reject</button></div><p id="result" role="status"></p>
<div id="kosync" class="device" hidden><p>For KOReader's built-in <strong>Progress sync</strong> (no plugin): set <em>Custom sync server</em> to <code id="kosync-server"></code>, then <em>Login</em> with the username <code id="kosync-user"></code> and this sync key as the password:</p>
<p><code id="sync-key"></code></p><p>It is shown only this once and works until the device is deleted or given a new key.</p></div>
<div id="kobo" class="device" hidden><p>For a <strong>Kobo</strong>: connect it by USB, open <code>.kobo/Kobo/Kobo eReader.conf</code>, and under <code>[OneStoreServices]</code> replace the <code>api_endpoint=</code> line with:</p>
<p><code id="kobo-line"></code></p><p>It is shown only this once; a new address can be made from the device's settings (the old one then stops working).</p></div>
<p id="plugin">The Bindery plugin for KOReader: <a id="plugin-download" href="${PLUGIN_DOWNLOAD}" download>${PLUGIN_ZIP}</a> (unzip it into KOReader's <code>plugins</code> folder).</p>`,
      APPROVE_SCRIPT,
      ` data-registration="${escapeHtml(p.id)}"`,
    );
  });
}
