// The web app's duplicate-content page, scanner page, library edit and delete, and the profile's
// details and sessions, in headless Chromium, both modes: each driven through the browser with the
// API's own messages; a hostile title stays text; the scanner page follows a scan live; a plain
// user never sees the admin pages nor another user's sessions. Every page: axe-core, no console
// error, keyboard, screenshots. And the sessions API (GET/DELETE /api/auth/sessions) on its own.
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, FIXTURE, items, manifest, settled } from './catalog-helpers';
import { api, csrfOf, eventually, expectError, instances, PASSWORD, register, type Account, type Call } from './helpers';
import { put } from './reading-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, openAs, tabTo, type Tab, unexpectedErrors, PAGE_MODES } from './web-browser';

declare const document: any;
declare const window: any;

const modes = PAGE_MODES;
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the admin pages in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

const HOSTILE = '<script>alert(1)</script>';
const EPUB = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const CBZ = join(FIXTURE, 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz');

let browser: Browser;
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'bindery-web-more-'));
  dirs.push(d);
  return d;
};
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`web admin: duplicates, scanner, libraries, profile (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let reader: Account;
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      expect(admin.role).toBe('admin');
      reader = await register(call, { caller: admin.token });
    }, 240_000);

    const as = (who: Account, width = 1280): Promise<Tab> => openAs(browser, b.url, who.token, width);

    it('Duplicates: a hostile title stays text; keep one by keyboard, keep all, and the 409 in the API words; the book page says so', async () => {
      const dir = tempDir();
      for (const [sub, file, name] of [
        ['a', EPUB, 'cle.epub'],
        ['b', EPUB, 'cle.epub'],
        ['c', CBZ, 'w.cbz'],
        ['d', CBZ, 'w.cbz'],
      ] as const) {
        mkdirSync(join(dir, sub));
        cpSync(file, join(dir, sub, name));
      }
      const lib = await createLibrary(call, admin.token, { name: `Dupes ${mode}`, folders: [dir], watch: false });
      await settled(call, admin.token, lib.id);
      const list = await items(call, admin.token, lib.id);
      const at = (p: string) => list.find((i) => i.file_path === p)!;
      const [a, bb, c] = [at('a/cle.epub'), at('b/cle.epub'), at('c/w.cbz')];
      const retitle = await call('PUT', `/api/media-items/${bb.id}`, { token: admin.token, body: { title: HOSTILE } });
      expect(retitle.status, retitle.text).toBe(200);
      expect((await put(call, reader.token, bb.id, { percentage: 0.4 })).json.status).toBe('saved');
      const groups = (await call('GET', '/api/admin/hash-conflicts', { token: admin.token })).json.data as { id: string; items: { id: string }[] }[];
      const g1 = groups.find((g) => g.items.some((i) => i.id === a.id))!;
      const g2 = groups.find((g) => g.items.some((i) => i.id === c.id))!;
      expect(g1.items.map((i) => i.id).sort()).toEqual([a.id, bb.id].sort());

      // the book page: admins are told and led to the decision; a reader sees no notice
      const t = await as(admin);
      await t.page.goto(`${b.url}/books/${a.id}`);
      await t.page.waitForSelector('#conflict-link');
      expect(await t.page.textContent('#conflict-notice')).toBe('This book has the same file content as another book. Decide which to keep');
      expect(await t.page.getAttribute('#conflict-link', 'href')).toBe(`/admin/conflicts#conflict-${g1.id}`);
      await Promise.all([t.page.waitForURL(`${b.url}/admin/conflicts#conflict-${g1.id}`), t.page.click('#conflict-link')]);
      expect(await t.page.textContent('h1')).toBe('Duplicate books');
      const card = t.page.locator(`li[data-conflict="${g1.id}"]`);
      const member = (id: string) => card.locator(`li[data-item="${id}"]`);
      expect(await member(bb.id).locator('.member-title a').textContent()).toBe(HOSTILE);
      expect(await t.page.locator('#conflicts script').count()).toBe(0);
      expect(await member(bb.id).locator('.member-paths').textContent()).toBe('b/cle.epub');
      expect(await member(bb.id).locator('.member-library').textContent()).toBe(`Dupes ${mode}`);
      expect(await member(bb.id).locator('.member-usage').textContent()).toBe('1 reading position');
      expect(await member(a.id).locator('.member-usage').textContent()).toBe('No reading data');
      await checkPage(t, `${mode}-admin-conflicts`);

      // keep the first copy, by keyboard: the other goes, the reader's position moves to the one kept
      await tabTo(t.page, `li[data-item="${a.id}"] button`);
      await t.page.keyboard.press('Enter');
      await t.page.locator(`#conflict-outcome-${g1.id} [role="status"]`).waitFor();
      expect(await t.page.textContent(`#conflict-outcome-${g1.id}`)).toBe('conflict resolved');
      expect(await t.page.locator(`li[data-conflict="${g1.id}"] button`).count()).toBe(0);
      expect((await call('GET', `/api/media-items/${bb.id}`, { token: admin.token })).status).toBe(404);
      expect((await call('GET', `/api/media-items/${a.id}`, { token: admin.token })).status).toBe(200);

      // another admin keeps all of the second group meanwhile: this page's button gets the API's 409 in its words
      const other = await call('POST', `/api/admin/hash-conflicts/${g2.id}/resolve`, { token: admin.token, body: { action: 'keep_all' } });
      expect(other.status, other.text).toBe(200);
      await t.page.click(`#keep-all-${g2.id}`);
      await t.page.locator(`#conflict-outcome-${g2.id} [role="alert"]`).waitFor();
      expect(await t.page.textContent(`#conflict-outcome-${g2.id}`)).toBe('hash conflict already resolved');
      await t.page.reload();
      expect(await t.page.locator(`li[data-conflict="${g1.id}"], li[data-conflict="${g2.id}"]`).count()).toBe(0);
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();

      // a reader: no notice on a book of a pending group (none left here: a new one), no admin page
      const dir2 = tempDir();
      for (const sub of ['x', 'y']) {
        mkdirSync(join(dir2, sub));
        cpSync(EPUB, join(dir2, sub, 'again.epub'));
      }
      const lib2 = await createLibrary(call, admin.token, { name: `More dupes ${mode}`, folders: [dir2], watch: false });
      await settled(call, admin.token, lib2.id);
      const x = (await items(call, admin.token, lib2.id)).find((i) => i.file_path === 'x/again.epub')!;
      const r = await as(reader);
      await r.page.goto(`${b.url}/books/${x.id}`);
      await r.page.waitForFunction(() => !document.querySelector('#conflict-notice[hx-get]'));
      expect(await r.page.locator('#conflict-notice').textContent()).toBe('');
      for (const path of ['/admin/conflicts', '/admin/scanner']) {
        const res = await r.page.goto(`${b.url}${path}`);
        expect(res?.status()).toBe(404);
        expect(await r.page.textContent('h1')).toBe('Not found');
      }
      expect(unexpectedErrors(r.errors, [404])).toEqual([]);
      await r.ctx.close();
      const g3 = ((await call('GET', '/api/admin/hash-conflicts', { token: admin.token })).json.data as { id: string; items: { id: string }[] }[]).find((g) =>
        g.items.some((i) => i.id === x.id),
      )!;
      // the page's write as a reader: the API refuses it in its words; nothing changes
      const forged = await fetch(`${b.url}/admin/conflicts/${g3.id}/resolve`, {
        method: 'POST',
        headers: { cookie: `token=${reader.token}`, 'content-type': 'application/x-www-form-urlencoded', 'HX-Request': 'true', ...(await csrfOf(call, reader.token)) },
        body: new URLSearchParams({ action: 'keep_all' }),
      });
      expect(forged.headers.get('x-api-status')).toBe('403');
      expect(await forged.text()).toBe('<div class="alert alert-error" role="alert">admin access required</div>');
      // without the session's CSRF token (htmx's own header proves nothing), not even sent to the API
      for (const extra of [{}, { 'HX-Request': 'true' }] as Record<string, string>[]) {
        const crossSite = await fetch(`${b.url}/admin/conflicts/${g3.id}/resolve`, {
          method: 'POST',
          headers: { cookie: `token=${admin.token}`, 'content-type': 'application/x-www-form-urlencoded', ...extra },
          body: new URLSearchParams({ action: 'keep_all' }),
        });
        expect(crossSite.status).toBe(403);
        expect(await crossSite.text()).toBe('forms of this page are sent by the page itself');
      }
      expect(((await call('GET', '/api/admin/hash-conflicts', { token: admin.token })).json.data as { id: string }[]).some((g) => g.id === g3.id)).toBe(true);
    });

    it('Libraries: rename, a refused name in the API words, and delete after a confirmation', async () => {
      const one = await createLibrary(call, admin.token, { name: `First ${mode}`, folders: [tempDir()], watch: false });
      const two = await createLibrary(call, admin.token, { name: `Second ${mode}`, folders: [tempDir()], watch: false });
      await settled(call, admin.token, one.id);
      await settled(call, admin.token, two.id);
      const t = await as(admin, 360);
      await t.page.goto(`${b.url}/admin/libraries`);
      const change = (id: string) => t.page.locator(`#change-${id}`);
      await change(one.id).locator('summary').click();
      await tabTo(t.page, `#edit-name-${one.id}`, 200);
      await checkPage(t, `${mode}-admin-libraries-change`);

      // a name another library has: refused as the catalog words it
      await t.page.fill(`#edit-name-${one.id}`, `Second ${mode}`);
      await change(one.id)
        .getByRole('button', { name: `Save First ${mode}` })
        .click();
      await t.page.locator(`#edit-outcome-${one.id} [role="alert"]`).waitFor();
      expect(await t.page.textContent(`#edit-outcome-${one.id}`)).toBe('library name already exists');

      // a folder outside what the server allows: the catalog's own message, the same as the API gives
      const refused = await call('PUT', `/api/libraries/${one.id}`, { token: admin.token, body: { folders: ['/no/such/folder'] } });
      expect(refused.status).toBe(400);
      await t.page.fill(`#edit-folders-${one.id}`, '/no/such/folder');
      await change(one.id)
        .getByRole('button', { name: `Save First ${mode}` })
        .click();
      await t.page.waitForFunction((id: string) => document.querySelector(`#edit-outcome-${id}`).textContent !== 'library name already exists', one.id);
      expect(await t.page.textContent(`#edit-outcome-${one.id}`)).toBe(refused.json.error);

      // a new name that looks like markup: saved, and the list shows it as text without a reload
      const folder = (await call('GET', `/api/libraries/${one.id}`, { token: admin.token })).json.folders[0];
      await t.page.fill(`#edit-folders-${one.id}`, folder);
      await t.page.fill(`#edit-name-${one.id}`, `<b>Renamed ${mode}</b>`);
      expect(await t.page.inputValue(`#edit-watch-${one.id}`)).toBe('false');
      await t.page.selectOption(`#edit-watch-${one.id}`, 'true');
      await t.page.evaluate(() => {
        window.stayed = true;
      });
      await change(one.id)
        .getByRole('button', { name: `Save First ${mode}` })
        .click();
      await t.page.locator(`#edit-outcome-${one.id} [role="status"]`).waitFor();
      expect(await t.page.textContent(`#edit-outcome-${one.id}`)).toBe('library updated');
      await t.page.waitForSelector(`#libraries tr[data-library="${one.id}"] td[data-label="Name"]:text-is("<b>Renamed ${mode}</b>")`);
      expect(await t.page.locator('#libraries b').count()).toBe(0);
      expect(await t.page.evaluate(() => window.stayed)).toBe(true);
      expect((await call('GET', `/api/libraries/${one.id}`, { token: admin.token })).json).toMatchObject({ name: `<b>Renamed ${mode}</b>`, folders: [folder], watch: true });

      // delete: the box must be ticked first (the browser keeps the form until it is)
      await change(two.id).locator('summary').click();
      await change(two.id)
        .getByRole('button', { name: `Delete Second ${mode}` })
        .click();
      expect(
        await change(two.id)
          .locator('input[name="confirm"]')
          .evaluate((e: any) => e.validity.valueMissing),
      ).toBe(true);
      await change(two.id).locator('input[name="confirm"]').check();
      await change(two.id)
        .getByRole('button', { name: `Delete Second ${mode}` })
        .click();
      await change(two.id).locator('[role="status"]').waitFor();
      expect(await change(two.id).textContent()).toBe('library deleted');
      await t.page.waitForFunction((id: string) => !document.querySelector(`#libraries tr[data-library="${id}"]`), two.id);
      expect((await call('GET', `/api/libraries/${two.id}`, { token: admin.token })).status).toBe(404);
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('Scanner: a scan of several books moves the page on live, with the files it could not read', async () => {
      const dir = tempDir();
      const lib = await createLibrary(call, admin.token, { name: `Corpus ${mode}`, folders: [dir], watch: false });
      await settled(call, admin.token, lib.id);
      const t = await as(admin);
      await t.page.goto(`${b.url}/admin/scanner`);
      expect(await t.page.textContent('h1')).toBe('Scanner');
      const row = t.page.locator(`#scan-states tr[data-library="${lib.id}"]`);
      expect(await row.locator('.scan-state').textContent()).toBe('Idle');
      expect(await row.locator('.scan-counts').textContent()).toBe('0 files seen, 0 added, 0 updated, 0 moved, 0 removed, 0 unreadable');
      await t.page.waitForSelector('main[data-live-state="open"]');
      await tabTo(t.page, '#scan-now');
      await checkPage(t, `${mode}-admin-scanner`);

      // the books arrive; the scan is started from the page and the page follows it without a reload
      cpSync(FIXTURE, dir, { recursive: true });
      const rows = manifest();
      const books = rows.filter((r) => r.kind === 'book' || r.kind === 'duplicate').length;
      const corrupt = rows.filter((r) => r.kind === 'corrupt');
      await t.page.evaluate(() => {
        window.stayed = true;
        window.states = [];
        new (window as any).MutationObserver(() => {
          const s = document.querySelector('#scan-states tr[data-library] .scan-state');
          if (s) window.states.push(s.textContent);
        }).observe(document.querySelector('main'), { subtree: true, childList: true, characterData: true });
      });
      await t.page.selectOption('#scan-library', lib.id);
      await t.page.click('#scan-now');
      await t.page.locator('#scan-outcome [role="status"]').waitFor();
      expect(await t.page.textContent('#scan-outcome')).toBe('scan queued');
      const done = await settled(call, admin.token, lib.id);
      expect(done.status).toBe('completed');
      expect(done.counts.added).toBeGreaterThanOrEqual(books - 5);
      await t.page.waitForFunction((id: string) => document.querySelector(`#scan-states tr[data-library="${id}"]`)?.dataset.state === 'completed', lib.id, { timeout: 20_000 });
      const c = done.counts;
      await t.page.waitForFunction(
        ([id, text]: string[]) => document.querySelector(`#scan-states tr[data-library="${id}"] .scan-counts`)?.textContent === text,
        [lib.id, `${c.files_seen} files seen, ${c.added} added, ${c.updated} updated, ${c.relinked} moved, ${c.removed} removed, ${c.errors} unreadable`],
        { timeout: 20_000 },
      );
      expect(await row.locator('.scan-state').textContent()).toBe('Idle');
      expect(await t.page.evaluate(() => window.stayed)).toBe(true);
      expect(await t.page.evaluate(() => window.states.length)).toBeGreaterThan(0);
      // the unreadable files, as the scanner lists them
      const issues = (await call('GET', `/api/scanner/issues?library_id=${lib.id}`, { token: admin.token })).json.data as { file_path: string; error: string }[];
      expect(issues.length).toBeGreaterThanOrEqual(1);
      expect(issues.some((i) => corrupt.some((r) => r.path === i.file_path))).toBe(true);
      await t.page.waitForSelector('#scan-issues');
      const shown = (await t.page.evaluate(() =>
        [...document.querySelectorAll('#scan-issues tbody tr')].map((tr: any) => [...tr.querySelectorAll('td')].slice(0, 3).map((td: any) => td.textContent)),
      )) as string[][];
      const mine = shown.filter(([name]) => name === `Corpus ${mode}`).map(([, file, error]) => [file, error]);
      expect(mine.sort()).toEqual(issues.map((i) => [i.file_path, i.error]).sort());
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    });

    it('Profile: names, e-mail and time zone saved; refusals in the API words', async () => {
      const me = await register(call, { caller: admin.token });
      const t = await as(me, 360);
      await t.page.goto(`${b.url}/profile`);
      expect(await t.page.inputValue('#email')).toBe(me.email);
      expect(await t.page.locator('#timezone option[value="Europe/Paris"]').count()).toBe(1);
      await tabTo(t.page, '#save-details', 200);
      await checkPage(t, `${mode}-profile-details`);
      await t.page.fill('#first-name', 'Ada <i>');
      await t.page.fill('#last-name', 'Lovelace');
      await t.page.fill('#email', `new-${me.email}`);
      await t.page.selectOption('#timezone', 'Europe/Paris');
      await t.page.click('#save-details');
      await t.page.locator('#details-outcome [role="status"]').waitFor();
      expect(await t.page.textContent('#details-outcome')).toBe('profile updated successfully');
      const p = (await call('GET', '/api/auth/profile', { token: me.token })).json;
      expect([p.first_name, p.last_name, p.email]).toEqual(['Ada <i>', 'Lovelace', `new-${me.email}`]);
      const rec = ((await call('GET', '/api/auth/users', { token: admin.token })).json as { id: string; timezone: string }[]).find((u) => u.id === me.id);
      expect(rec?.timezone).toBe('Europe/Paris');
      await t.page.reload();
      expect(await t.page.inputValue('#first-name')).toBe('Ada <i>');
      expect(await t.page.inputValue('#email')).toBe(`new-${me.email}`);

      // someone else's e-mail
      await t.page.fill('#email', admin.email);
      await t.page.click('#save-details');
      await t.page.locator('#details-outcome [role="alert"]').waitFor();
      expect(await t.page.textContent('#details-outcome')).toBe('email already taken');
      // a zone identity does not know (the list only offers known ones: a tampered page)
      await t.page.fill('#email', `new-${me.email}`);
      await t.page.evaluate(() => {
        const o = document.createElement('option');
        o.value = 'Mars/Olympus_Mons';
        o.textContent = 'Mars';
        document.getElementById('timezone').append(o);
      });
      await t.page.selectOption('#timezone', 'Mars/Olympus_Mons');
      await t.page.click('#save-details');
      await t.page.waitForFunction(() => document.getElementById('details-outcome').textContent === 'Invalid timezone');
      expect(await t.page.locator('#details-outcome [role="alert"]').count()).toBe(1);
      const rec2 = ((await call('GET', '/api/auth/users', { token: admin.token })).json as { id: string; timezone: string }[]).find((u) => u.id === me.id);
      expect(rec2?.timezone).toBe('Europe/Paris');
      expect(t.errors.filter((e) => !/status of (400|409)/.test(e))).toEqual([]);
      await t.ctx.close();
    });

    const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0';
    const signIn = async (who: Account, ua: string) => {
      const r = await call('POST', '/api/auth/login', { body: { login: who.username, password: PASSWORD }, headers: { 'user-agent': ua } });
      expect(r.status, r.text).toBe(200);
      return { token: r.json.access_token as string, refresh: r.json.refresh_token as string };
    };
    type Listed = { id: string; client: string; started_at: string; last_used_at: string; expires_at: string; current: boolean };
    const sessions = async (token: string): Promise<Listed[]> => {
      const r = await call('GET', '/api/auth/sessions', { token });
      expect(r.status, r.text).toBe(200);
      return r.json.data;
    };
    const works = async (token: string) => (await call('GET', '/api/auth/profile', { token })).status;
    /** a signed-out token is refused once the auth view has the revocation (each replica caches it for a second) */
    const refused = (token: string) => eventually(async () => expect(await works(token)).toBe(401), 5000);

    it("Sessions API: only the caller's own, this one marked; one signed out, then all the others; a rebuild lists the same", async () => {
      const u = await register(call, { caller: admin.token });
      const laptop = await signIn(u, FIREFOX);
      const kobo = await signIn(u, 'KOReader/2024.11 (Kobo)');
      const mine = await sessions(laptop.token);
      expect(mine.length).toBe(3);
      const [l, k] = [mine.find((s) => s.client === FIREFOX)!, mine.find((s) => s.client === 'KOReader/2024.11 (Kobo)')!];
      expect(l.current).toBe(true);
      expect(mine.filter((s) => s.current).map((s) => s.id)).toEqual([l.id]);
      expect(k.current).toBe(false);
      expect(Date.parse(l.expires_at)).toBeGreaterThan(Date.now());
      expect((await sessions(kobo.token)).find((s) => s.current)?.id).toBe(k.id);
      expectError(await call('GET', '/api/auth/sessions'), 401, 'authentication required');

      // another user sees none of them and cannot end one: it is as absent as an unknown one
      const other = await register(call, { caller: admin.token });
      const theirs = await sessions(other.token);
      expect(theirs.some((s) => mine.some((m) => m.id === s.id))).toBe(false);
      expectError(await call('DELETE', `/api/auth/sessions/${k.id}`, { token: other.token }), 404, 'session not found');
      expectError(await call('DELETE', `/api/auth/sessions/${k.id}`, { token: admin.token }), 404, 'session not found');
      expectError(await call('DELETE', '/api/auth/sessions/not-a-session', { token: u.token }), 400, 'invalid session id');
      expect(await works(kobo.token)).toBe(200);

      // the owner signs the Kobo out: its token stops at once, its refresh token too
      const out = await call('DELETE', `/api/auth/sessions/${k.id}`, { token: laptop.token });
      expect(out.status, out.text).toBe(200);
      expect(out.json).toEqual({ message: 'session signed out' });
      await refused(kobo.token);
      expect((await call('POST', '/api/auth/refresh', { body: { refresh_token: kobo.refresh } })).status).toBe(401);
      expect((await sessions(laptop.token)).map((s) => s.id).sort()).toEqual(
        mine
          .filter((s) => s.id !== k.id)
          .map((s) => s.id)
          .sort(),
      );
      expectError(await call('DELETE', `/api/auth/sessions/${k.id}`, { token: laptop.token }), 404, 'session not found');

      // a refresh keeps the session (same id) with a new token and a later last use
      const r = await call('POST', '/api/auth/refresh', { body: { refresh_token: laptop.refresh } });
      expect(r.status, r.text).toBe(200);
      const fresh = r.json.access_token as string;
      const after = await sessions(fresh);
      const again = after.find((s) => s.id === l.id)!;
      expect(again.current).toBe(true);
      expect(again.started_at).toBe(l.started_at);
      expect(Date.parse(again.last_used_at)).toBeGreaterThanOrEqual(Date.parse(l.last_used_at));

      // the read model rebuilt from identity's log lists exactly the same
      const rebuilt = await call('POST', '/api/admin/projections/identity/rebuild?wait=true', { token: admin.token });
      expect(rebuilt.status, rebuilt.text).toBe(200);
      expect(await sessions(fresh)).toEqual(after);

      // everywhere else: the registration's session goes, this one stays
      const rest = await call('DELETE', '/api/auth/sessions', { token: fresh });
      expect(rest.status, rest.text).toBe(200);
      expect(rest.json).toEqual({ message: 'signed out of 1 other session', signed_out: 1 });
      await refused(u.token);
      expect(await works(fresh)).toBe(200);
      expect((await sessions(fresh)).map((s) => s.id)).toEqual([l.id]);
      expect((await call('DELETE', '/api/auth/sessions', { token: fresh })).json).toEqual({ message: 'signed out of 0 other sessions', signed_out: 0 });
      // the other user's sessions were never touched
      expect(await works(other.token)).toBe(200);
    });

    it('Profile sessions: this browser marked, a hostile client name as text, sign one out by keyboard, then everywhere else', async () => {
      const u = await register(call, { caller: admin.token });
      const win = await signIn(u, FIREFOX);
      const hostile = await signIn(u, HOSTILE);
      const t = await open(browser, 360);
      await t.page.goto(`${b.url}/login`);
      await t.page.fill('#login-name', u.username);
      await t.page.fill('#password', PASSWORD);
      await Promise.all([t.page.waitForURL(`${b.url}/dashboard`), t.page.click('#submit')]);
      await t.page.goto(`${b.url}/profile`);
      await t.page.waitForSelector('#sessions li.session');
      const listed = await sessions(win.token);
      expect(await t.page.locator('#sessions li.session').count()).toBe(listed.length);
      expect(listed.length).toBe(4);
      const here = t.page.locator('#sessions li[data-current]');
      expect(await here.locator('.session-client').textContent()).toBe('Chrome on Linux (this browser)');
      expect(await here.locator('button').count()).toBe(0);
      const winId = listed.find((s) => s.client === FIREFOX)!.id;
      expect(await t.page.locator(`li[data-session="${winId}"] .session-client`).textContent()).toBe('Firefox on Windows');
      const hostileId = listed.find((s) => s.client === HOSTILE)!.id;
      expect(await t.page.locator(`li[data-session="${hostileId}"] .session-client`).textContent()).toBe(HOSTILE);
      expect(await t.page.locator(`li[data-session="${winId}"] .session-agent`).textContent()).toBe(FIREFOX);
      expect(await t.page.locator('#sessions script').count()).toBe(0);
      await checkPage(t, `${mode}-profile-sessions`);

      // the Windows laptop, signed out by keyboard
      await tabTo(t.page, `li[data-session="${winId}"] button`, 200);
      await t.page.keyboard.press('Enter');
      await t.page.locator('#sessions-outcome [role="status"]').waitFor();
      expect(await t.page.textContent('#sessions-outcome')).toBe('session signed out');
      await t.page.waitForFunction((id: string) => !document.querySelector(`li[data-session="${id}"]`), winId);
      await refused(win.token);

      // everywhere else: the registration's and the hostile one's sessions; this browser stays signed in
      await t.page.click('#sign-out-others');
      await t.page.waitForFunction(() => document.getElementById('sessions-outcome').textContent === 'signed out of 2 other sessions');
      await t.page.waitForFunction(() => document.querySelectorAll('#sessions li.session').length === 1);
      expect(await t.page.locator('#sign-out-others').count()).toBe(0);
      await refused(hostile.token);
      await refused(u.token);
      await t.page.reload();
      expect(await t.page.textContent('h1')).toBe('Your profile');
      await t.page.waitForSelector('#sessions li[data-current]');
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();

      // another user's profile never lists these
      const r = await as(reader);
      await r.page.goto(`${b.url}/profile`);
      await r.page.waitForSelector('#sessions li.session');
      const ids = await r.page.locator('#sessions li.session').evaluateAll((els: any[]) => els.map((e) => e.dataset.session));
      expect(ids.some((id: string) => listed.some((s) => s.id === id))).toBe(false);
      await r.ctx.close();
    });
  });
}
