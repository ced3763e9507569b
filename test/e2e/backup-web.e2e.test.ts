// The admin page's backup button (issue 46), in headless Chromium: the admin reaches it by keyboard,
// a click downloads a whole archive (its manifest checked as a restore checks it), the page passes
// axe on a desktop and a phone width; a plain user gets neither the page nor the archive.
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestOf } from './backup-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { checkPage, HAS_CHROMIUM, launch, openAs, PAGE_MODES, tabTo } from './web-browser';

const get = instances(PAGE_MODES);
const suite = HAS_CHROMIUM ? describe.each(PAGE_MODES) : describe.skip.each(['no /usr/bin/chromium']);

suite('the backup button on the admin page (%s)', (mode) => {
  let browser: Browser;
  let call: Call;
  let url: string;
  let admin: Account;
  let plain: Account;
  const work = mkdtempSync(join(tmpdir(), 'bindery-backup-web-'));

  beforeAll(async () => {
    const b = await get(mode as (typeof PAGE_MODES)[number]);
    url = b.url;
    call = api(b);
    admin = await register(call);
    plain = await register(call, { caller: admin.token });
    browser = await launch();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('the admin tabs to the button and downloads a backup', async () => {
    for (const width of [1280, 360]) {
      const t = await openAs(browser, url, admin.token, width);
      await t.page.goto(`${url}/admin/system`);
      expect(await t.page.textContent('#backup-title')).toBe('Backup');
      expect(await t.page.getAttribute('#backup-download', 'href')).toBe('/api/admin/backup');
      await tabTo(t.page, '#backup-download', 200);
      await checkPage(t, `${mode}-admin-system-backup-${width}`);
      if (width === 1280) {
        const [download] = await Promise.all([t.page.waitForEvent('download', { timeout: 120_000 }), t.page.keyboard.press('Enter')]);
        expect(download.suggestedFilename()).toMatch(/^bindery-backup-\d{8}T\d{6}Z\.zip$/);
        const file = join(work, download.suggestedFilename());
        await download.saveAs(file);
        expect(await manifestOf(file)).toMatchObject({ format: 'bindery-backup', format_version: 1, mode: 'embedded' });
      }
      expect(t.errors).toEqual([]);
      await t.ctx.close();
    }
  }, 240_000);

  it('a plain user gets neither the page nor the archive', async () => {
    const t = await openAs(browser, url, plain.token);
    expect((await t.page.goto(`${url}/admin/system`))?.status()).toBe(404);
    const r = await t.page.request.get(`${url}/api/admin/backup`);
    expect(r.status()).toBe(403);
    expect(await r.json()).toEqual({ error: 'admin access required' });
    await t.ctx.close();
  }, 60_000);
});
