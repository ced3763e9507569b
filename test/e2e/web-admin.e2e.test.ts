// The web app's admin pages in headless Chromium, both modes: People (add a person with public
// registration off, role, maximum devices, library access, a new password, delete). A plain user
// never sees them; their writes take only the page's own (htmx) requests; names stay text.
// Every page: axe-core, no console error, keyboard reachable, screenshots at 360 px and 1280 px.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startBindery, type Bindery } from '../support/bindery';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, csrfOf, eventually, login, PASSWORD, register, uniq, type Account, type Call } from './helpers';
import { createHash } from 'node:crypto';
import { enroll } from './device-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, tabTo, type Tab, PAGE_MODES } from './web-browser';

const modes = PAGE_MODES;
if (!HAS_CHROMIUM) describe.skip(`the admin pages in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`web admin pages (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let reader: Account;
    const libs: Record<string, string> = {};
    const dirs: string[] = [];
    beforeAll(async () => {
      // the defaults a new server has: public registration off
      b = await startBindery(mode, { PUBLIC_REGISTRATION: 'false' });
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
      reader = await register(call, { caller: admin.token, name: uniq('reader') });
      for (const name of ['Comics', 'Novels']) {
        const dir = mkdtempSync(join(tmpdir(), 'bindery-web-admin-'));
        dirs.push(dir);
        const r = await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [dir] } });
        expect(r.status, r.text).toBe(201);
        libs[name] = r.json.id;
      }
    }, 240_000);
    afterAll(async () => {
      await b?.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    const as = (who: Account, width = 1280): Promise<Tab> => openAs(browser, b.url, who.token, width);
    const card = (t: Tab, username: string) => t.page.locator(`li.person[data-name="${username}"]`);

    it('adds a person while public registration is off; the admin stays signed in as themselves', async () => {
      const t = await as(admin);
      await t.page.goto(`${b.url}/admin/users`);
      expect(await t.page.textContent('h1')).toBe('People');
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual([
        'Home',
        'Library',
        'Upload',
        'Collections',
        'Devices',
        'Statistics',
        'Profile',
        'Libraries',
        'People',
        'System',
      ]);
      await tabTo(t.page, '#add-user-submit');
      await checkPage(t, `${mode}-admin-people`);
      // a name that looks like markup is text
      const name = `<b>${uniq('kim').slice(0, 20)}</b>`;
      await t.page.fill('#new-email', 'kim@example.com');
      await t.page.fill('#new-username', name);
      await t.page.fill('#new-password', 'kims-passw0rd');
      await Promise.all([t.page.waitForURL(`${b.url}/admin/users?added=${encodeURIComponent(name)}`), t.page.click('#add-user-submit')]);
      expect(await t.page.textContent('#added')).toBe(`Account created for ${name}.`);
      expect(await card(t, name).locator('.person-name').textContent()).toBe(name);
      expect(await t.page.locator('li.person b').count()).toBe(0);
      // still the admin in this browser, and the new person signs in with the password given
      expect(await t.page.textContent('#who')).toBe(admin.username);
      expect((await login(call, name, 'kims-passw0rd')).status).toBe(200);
      // a duplicate is refused in the API's words
      await t.page.fill('#new-email', 'kim@example.com');
      await t.page.fill('#new-username', uniq('kim2'));
      await t.page.fill('#new-password', 'kims-passw0rd');
      await t.page.click('#add-user-submit');
      await t.page.waitForSelector('#add-outcome [role="alert"]');
      expect(await t.page.textContent('#add-outcome')).toBe('email already exists');
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('changes role, maximum devices, library access and password, and deletes, each as the API says', async () => {
      const t = await as(admin, 360);
      await t.page.goto(`${b.url}/admin/users`);
      const c = card(t, reader.username);
      await c.locator('summary').click();
      // only one library
      await c.locator(`#all-${reader.id}`).selectOption('false');
      await c.locator(`#lib-${reader.id}-${libs.Novels}`).check();
      await c.getByRole('button', { name: 'Save access' }).click();
      await c.locator(`#access-outcome-${reader.id} [role="status"]`).waitFor();
      expect(await c.locator(`#access-outcome-${reader.id}`).textContent()).toBe('library access updated');
      await t.page.reload();
      expect(await card(t, reader.username).locator('.person-access').textContent()).toBe('Novels');
      const access = await call('GET', `/api/auth/users/${reader.id}/libraries`, { token: admin.token });
      expect(access.json).toEqual({ user_id: reader.id, all_libraries: false, library_ids: [libs.Novels] });
      expect(((await call('GET', '/api/libraries', { token: reader.token })).json as { name: string }[]).map((l) => l.name)).toEqual(['Novels']);

      const c2 = card(t, reader.username);
      await c2.locator('summary').click();
      await c2.locator('input[name="max_devices"]').fill('7');
      await c2.getByRole('button', { name: 'Save maximum' }).click();
      await c2.locator(`#devices-outcome-${reader.id} [role="status"]`).waitFor();
      expect(await c2.locator(`#devices-outcome-${reader.id}`).textContent()).toBe('max devices updated');
      // the browser keeps the number in the API's range (1 to 100) before anything is sent
      await c2.locator('input[name="max_devices"]').fill('500');
      expect(await c2.locator('input[name="max_devices"]').evaluate((e: any) => e.validity.rangeOverflow)).toBe(true);
      await c2.locator('input[name="max_devices"]').fill('7');
      const rec = ((await call('GET', '/api/auth/users', { token: admin.token })).json as { id: string; max_devices: number }[]).find((u) => u.id === reader.id);
      expect(rec?.max_devices).toBe(7);

      await c2.locator(`#pw-${reader.id}`).fill('an0ther-password');
      await c2.locator(`#pw2-${reader.id}`).fill('an0ther-password');
      await c2.getByRole('button', { name: 'Set password' }).click();
      await c2.locator(`#password-outcome-${reader.id} [role="status"]`).waitFor();
      expect(await c2.locator(`#password-outcome-${reader.id}`).textContent()).toBe('password updated successfully');
      expect((await login(call, reader.username, 'an0ther-password')).status).toBe(200);

      await c2.locator('select[name="role"]').selectOption('admin');
      await Promise.all([t.page.waitForEvent('load'), c2.getByRole('button', { name: 'Save role' }).click()]);
      expect(await card(t, reader.username).locator('.person-role').textContent()).toBe('Administrator');
      await eventually(async () => expect((await login(call, reader.username, 'an0ther-password')).json.user.role).toBe('admin'));

      const c3 = card(t, reader.username);
      await c3.locator('summary').click();
      await c3.locator('input[name="confirm"]').check();
      await Promise.all([t.page.waitForEvent('load'), c3.getByRole('button', { name: `Delete ${reader.username}` }).click()]);
      expect(await card(t, reader.username).count()).toBe(0);
      expect((await login(call, reader.username, 'an0ther-password')).status).toBe(401);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('Devices: rename, shelves, a sync key shown once, the reader key, remove; a hostile device name stays text', async () => {
      const owner = await register(call, { caller: admin.token });
      const hostile = '<img src=x onerror=alert(1)>';
      const dev = await enroll(call, owner, hostile);
      const t = await as(owner, 360);
      await t.page.goto(`${b.url}/devices`);
      expect(await t.page.textContent('h1')).toBe('Devices');
      const cardOf = (name: string) => t.page.locator(`li.device[data-device="${name}"]`);
      expect(await cardOf(hostile).locator('.device-name').textContent()).toBe(hostile);
      expect(await t.page.locator('li.device img').count()).toBe(0);
      expect(await t.page.textContent('#opds-address')).toBe(`${b.url}/opds`);
      await tabTo(t.page, '#make-opds-key');
      await checkPage(t, `${mode}-devices`);

      // a shelf: one of the owner's collections on the device, and off again
      const recent = ((await call('GET', '/api/collections', { token: owner.token })).json.data as { id: string; name: string }[]).find((c) => c.name === 'Recently Added')!;
      await cardOf(hostile).locator('select[name="collection_id"]').selectOption(recent.id);
      await Promise.all([t.page.waitForEvent('load'), cardOf(hostile).getByRole('button', { name: 'Add shelf' }).click()]);
      expect(await cardOf(hostile).locator('.shelf-name').allTextContents()).toEqual(['Recently Added']);
      expect((await call('GET', `/api/devices/${dev.device_id}/shelves`, { token: owner.token })).json.shelves.map((x: { name: string }) => x.name)).toEqual(['Recently Added']);
      await Promise.all([t.page.waitForEvent('load'), cardOf(hostile).getByRole('button', { name: 'Take Recently Added off' }).click()]);
      expect(await cardOf(hostile).locator('.shelf-name').count()).toBe(0);

      // a sync key, shown once, signs KOReader's stock sync in
      await cardOf(hostile).locator('summary').click();
      await cardOf(hostile).getByRole('button', { name: 'Make a new sync key' }).click();
      const key = (await cardOf(hostile).locator('.sync-key').textContent())!;
      expect(key.length).toBeGreaterThan(10);
      expect(await cardOf(hostile).locator('.kosync-user').textContent()).toBe(owner.username);
      expect(await cardOf(hostile).locator('.kosync-server').textContent()).toBe(`${b.url}/api/kosync`);
      const md5 = createHash('md5').update(key).digest('hex');
      expect((await call('GET', '/api/kosync/users/auth', { headers: { 'x-auth-user': owner.username, 'x-auth-key': md5 } })).json).toEqual({ authorized: 'OK' });

      // rename
      await cardOf(hostile).locator(`#rename-${dev.device_id}`).fill('Kobo Libra');
      await Promise.all([t.page.waitForEvent('load'), cardOf(hostile).getByRole('button', { name: 'Rename' }).click()]);
      expect(await cardOf('Kobo Libra').locator('.device-name').textContent()).toBe('Kobo Libra');

      // the reader key: made and shown once, works, revoked
      await t.page.click('#make-opds-key');
      const url = (await t.page.locator('#opds-key-outcome .opds-key-url').textContent())!;
      expect(url).toMatch(new RegExp(`^${b.url}/opds/key/`));
      expect((await fetch(url)).status).toBe(200);
      await t.page.reload();
      expect(await t.page.textContent('#opds-key-state')).toMatch(/^You have a reader key, made [A-Z][a-z]{2} \d{1,2}, \d{4}\.$/);
      await Promise.all([t.page.waitForEvent('load'), t.page.click('#revoke-opds-key')]);
      expect((await fetch(url)).status).toBe(401);

      // remove the device: its credential stops at once
      await cardOf('Kobo Libra').locator('summary').click();
      await cardOf('Kobo Libra').locator('input[name="confirm"]').check();
      await Promise.all([t.page.waitForEvent('load'), cardOf('Kobo Libra').getByRole('button', { name: 'Remove Kobo Libra' }).click()]);
      expect(await t.page.textContent('#no-devices')).toBe('No device yet. Add one with the steps below.');
      expect((await call('GET', '/api/sync/device', { headers: { authorization: `Device ${dev.token}` } })).status).toBe(401);
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });

    it("the approval page shows a Kobo's store address line once, and the address works", async () => {
      const owner = await register(call, { caller: admin.token });
      const reg = await call('POST', '/api/devices/register', { body: { name: 'Kobo Clara', client: 'kobo', model: 'Clara BW' } });
      expect(reg.status, reg.text).toBe(201);
      const t = await as(owner);
      await t.page.goto(`${b.url}${reg.json.auth_url}`);
      expect(await t.page.textContent('#device-name')).toBe('Kobo Clara');
      await checkPage(t, `${mode}-approve-kobo`);
      await t.page.click('#approve');
      await t.page.waitForSelector('#result[data-outcome="approved"]');
      const line = (await t.page.textContent('#kobo-line'))!;
      expect(line).toMatch(new RegExp(`^api_endpoint=${b.url}/kobo/\\S+$`));
      const init = await fetch(`${line.slice('api_endpoint='.length)}/v1/initialization`);
      expect(init.status).toBe(200);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('System: the admin turns public registration on and off again on the settings form', async () => {
      const t = await as(admin, 360);
      await t.page.goto(`${b.url}/admin/system`);
      expect(await t.page.inputValue('#setting-registration_enabled')).toBe('false');
      await tabTo(t.page, '#save-settings', 200);
      await checkPage(t, `${mode}-admin-system-settings`);
      await t.page.selectOption('#setting-registration_enabled', 'true');
      await t.page.click('#save-settings');
      await t.page.locator('#settings-outcome [role="status"]').waitFor();
      expect(await t.page.textContent('#settings-outcome')).toBe('settings updated successfully');
      expect((await call('GET', '/api/setup/status')).json.registration_enabled).toBe(true);
      const n = uniq('walkin');
      expect((await call('POST', '/api/auth/register', { body: { email: `${n}@example.com`, username: n, password: PASSWORD } })).status).toBe(201);
      // the browser keeps a number within its bounds; the server says no to anything else
      await t.page.fill('#setting-scan_poll_interval_seconds', '0');
      expect(await t.page.locator('#setting-scan_poll_interval_seconds').evaluate((e: any) => e.validity.rangeUnderflow)).toBe(true);
      await t.page.fill('#setting-scan_poll_interval_seconds', '60');
      await t.page.selectOption('#setting-registration_enabled', 'false');
      await t.page.evaluate(() => (globalThis as any).document.getElementById('settings-outcome').replaceChildren());
      await t.page.click('#save-settings');
      await t.page.locator('#settings-outcome [role="status"]').waitFor();
      expect((await call('GET', '/api/setup/status')).json.registration_enabled).toBe(false);
      const m = uniq('walkin');
      expect((await call('POST', '/api/auth/register', { body: { email: `${m}@example.com`, username: m, password: PASSWORD } })).status).toBe(403);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('a plain user never sees the admin pages; their writes take only the page itself', async () => {
      const plain = await register(call, { caller: admin.token });
      const t = await as(plain);
      const r = await t.page.goto(`${b.url}/admin/users`);
      expect(r?.status()).toBe(404);
      expect(await t.page.textContent('h1')).toBe('Not found');
      expect(await t.page.locator('nav[aria-label="Main"] a').allTextContents()).toEqual(['Home', 'Library', 'Collections', 'Devices', 'Statistics', 'Profile']);
      await t.ctx.close();
      // a form without the session's CSRF token is refused before anything happens, even with the
      // admin's cookie: a cross-site form, and htmx in another document of this origin (its HX-Request proves nothing)
      const others: Record<string, string>[] = [{}, { 'HX-Request': 'true' }, { 'HX-Request': 'true', ...(await csrfOf(call, plain.token)) }];
      for (const extra of others) {
        const forged = await fetch(`${b.url}/admin/users`, {
          method: 'POST',
          headers: { cookie: `token=${admin.token}`, 'content-type': 'application/x-www-form-urlencoded', ...extra },
          body: new URLSearchParams({ email: 'mallory@example.com', username: 'mallory', password: 'mall0ry-pass', role: 'admin' }),
        });
        expect(forged.status).toBe(403);
      }
      expect((await login(call, 'mallory', 'mall0ry-pass')).status).toBe(401);
      // the API still refuses a plain user's admin write sent by the page
      const own = await fetch(`${b.url}/admin/users/${admin.id}/role`, {
        method: 'POST',
        headers: { cookie: `token=${plain.token}`, 'content-type': 'application/x-www-form-urlencoded', 'HX-Request': 'true', ...(await csrfOf(call, plain.token)) },
        body: new URLSearchParams({ role: 'user' }),
      });
      expect(own.status).toBe(200);
      expect(own.headers.get('x-api-status')).toBe('403');
      expect(await own.text()).toBe('<div class="alert alert-error" role="alert">admin access required</div>');
      expect((await call('GET', '/api/auth/profile', { token: admin.token })).json.role).toBe('admin');
    });
  });
}
