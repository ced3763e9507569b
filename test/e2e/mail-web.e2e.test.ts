// Mail's pages (issue 47) in headless Chromium against a real SMTP server in this process: forgot
// password from the sign-in page to the mailed link and the new password; the admin's test mail and
// invitation, and the invited person's account made from the mailed link; the profile's e-reader
// address, and a book page's Send to it. Every page: axe-core, no console error, a phone's width, screenshots.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startBindery, type Bindery } from '../support/bindery';
import { api, login, register, uniq, type Account, type Call } from './helpers';
import { linkIn, startMailServer, type MailServer } from './mail-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, open, openAs, PAGE_MODES, tabTo } from './web-browser';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { smallEpub } from './kobo-helpers';

const REQUESTED = 'if an account has this e-mail address, a link to reset its password is on its way';
const NEW = 'n3w-passphrase';

if (!HAS_CHROMIUM) describe.skip(`mail pages in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`mail pages (${mode})`, () => {
    let browser: Browser;
    let smtp: MailServer;
    let b: Bindery;
    let call: Call;
    let admin: Account;
    beforeAll(async () => {
      smtp = await startMailServer();
      [b, browser] = await Promise.all([startBindery(mode, smtp.env), launch()]);
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
    }, 240_000);
    afterAll(async () => {
      await browser?.close();
      await b?.stop();
      await smtp?.stop();
    });

    it('forgot password: the sign-in page links to it, the mailed link sets a new password', async () => {
      const u = await register(call);
      const t = await open(browser);
      await t.page.goto(`${b.url}/login`);
      await t.page.click('#forgot-link a');
      await t.page.waitForURL(`${b.url}/forgot-password`);
      await checkPage(t, 'mail-forgot');
      await t.page.fill('#forgot-email', u.email);
      await t.page.click('#forgot-send');
      await expect.poll(() => t.page.textContent('#forgot-outcome')).toBe(REQUESTED);
      const { url } = linkIn(await smtp.next(u.email), '/reset-password');
      await t.page.goto(url);
      await checkPage(t, 'mail-reset');
      await t.page.fill('#reset-password', NEW);
      await t.page.fill('#reset-confirm', NEW);
      await t.page.click('#reset-save');
      await t.page.waitForURL(`${b.url}/login`);
      expect((await login(call, u.username, NEW)).status).toBe(200);
      await t.ctx.close();
    });

    it('the admin sends a test mail and an invitation; the invited person makes their account from the mail', async () => {
      const t = await openAs(browser, b.url, admin.token);
      await t.page.goto(`${b.url}/admin/system`);
      await t.page.waitForSelector('#settings-test-mail');
      await t.page.click('#settings-test-mail');
      await expect.poll(() => t.page.textContent('#settings-test-mail-outcome')).toBe(`test mail sent to ${admin.email}`);
      expect((await smtp.next(admin.email)).mail.subject).toBe('Bindery test mail');
      await t.page.click('#mail-admin a[href="/admin/mail"]');
      await t.page.waitForURL(`${b.url}/admin/mail`);
      await checkPage(t, 'mail-admin');
      const email = `${uniq('guest')}@example.com`;
      await t.page.fill('#invite-email', email);
      await t.page.selectOption('#invite-all', 'true');
      await t.page.click('#invite-send');
      await expect.poll(() => t.page.textContent('#invite-outcome')).toBe(`invitation sent to ${email}`);
      await t.page.waitForSelector(`tr[data-invitation="${email}"]`);
      await t.ctx.close();

      const { url } = linkIn(await smtp.next(email), '/invitation');
      const g = await open(browser, 360);
      await g.page.goto(url);
      expect(await g.page.textContent('main')).toContain(email);
      await checkPage(g, 'mail-invitation');
      const username = uniq('guest');
      await g.page.fill('#accept-username', username);
      await g.page.fill('#accept-password', NEW);
      await g.page.fill('#accept-confirm', NEW);
      await g.page.click('#accept-create');
      await g.page.waitForURL(`${b.url}/dashboard`);
      expect((await login(call, email, NEW)).json.user).toMatchObject({ username, email, role: 'user' });
      await g.ctx.close();
    });

    it('a person sets their e-reader address on the profile', async () => {
      const u = await register(call);
      const t = await openAs(browser, b.url, u.token);
      await t.page.goto(`${b.url}/profile`);
      await t.page.waitForSelector('#ereader-address');
      await checkPage(t, 'mail-profile');
      await t.page.fill('#ereader-address', 'someone_1@kindle.com');
      await t.page.click('#ereader-save');
      await expect.poll(() => t.page.textContent('#ereader-outcome')).toBe('e-reader address saved');
      expect((await call('GET', '/api/auth/ereader', { token: u.token })).json).toEqual({ address: 'someone_1@kindle.com' });
      await t.ctx.close();
    });

    it("a book page's Send mails the book to the person's e-reader; without an address it says where to set one", async () => {
      const dir = emptyDir();
      writeFileSync(join(dir, 'mailed.epub'), smallEpub('Mailed <b>Book</b>', 'Ann Sender', randomUUID()));
      const lib = await createLibrary(call, admin.token, { name: uniq('Mailable'), folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      const [item] = await items(call, admin.token, lib.id);
      const u = await register(call);
      const t = await openAs(browser, b.url, u.token);
      await t.page.goto(`${b.url}/books/${item!.id}`);
      expect(await t.page.textContent('#send-hint')).toBe('To mail books to your e-reader, set its address on your profile.');
      const address = `${uniq('reader')}@kindle.com`;
      expect((await call('PUT', '/api/auth/ereader', { token: u.token, body: { address } })).status).toBe(200);
      await t.page.reload();
      expect(await t.page.textContent('#send-ereader')).toBe(`Send to ${address}`);
      await tabTo(t.page, '#send-ereader');
      await t.page.keyboard.press('Enter');
      await expect.poll(() => t.page.textContent('#send-outcome')).toBe(`Mailed <b>Book</b> is on its way to ${address}`);
      const m = await smtp.next(address);
      expect(m.mail.attachments[0]?.filename).toBe('mailed.epub');
      await checkPage(t, 'mail-send');
      // the profile lists the send with its status (as text: the title's markup is not markup)
      await expect
        .poll(async () => {
          await t.page.goto(`${b.url}/profile`);
          await t.page.waitForSelector('#ereader');
          return t.page.textContent('#sends tbody tr .send-status').catch(() => null);
        })
        .toBe('Sent');
      expect(await t.page.textContent('#sends tbody tr td a')).toBe('Mailed <b>Book</b>');
      expect(await t.page.locator('#sends b').count()).toBe(0);
      await checkPage(t, 'mail-sends');
      // in bulk from the library's selection
      await t.page.goto(`${b.url}/library?library=${lib.id}`);
      await t.page.check(`#pick-${item!.id}`);
      await t.page.selectOption('#selection-action', 'send');
      await t.page.click('#selection-apply');
      await expect.poll(() => t.page.textContent('#selection-outcome')).toBe('1 of 1 book on the way.');
      expect((await smtp.next(address)).mail.attachments[0]?.filename).toBe('mailed.epub');
      await t.ctx.close();
    });
  });
}
