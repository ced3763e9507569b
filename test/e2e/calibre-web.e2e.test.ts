// calibre in the browser (issue 44), with a library made by Debian's calibre: the book page shows
// calibre's custom columns as calibre names them, a hostile value as text; the admin's library page
// shows the migration report (books, formats, fields, what could not be mapped and why) and imports
// calibre's ratings and read marks for a person chosen in the page. Headless Chromium, axe clean,
// desktop and phone widths. Embedded mode only (PAGE_MODES, decision 97). Skipped where calibredb
// or Chromium is missing.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes } from '../support/bindery';
import { api, instances, register, type Account, type Call } from './helpers';
import { createLibrary, FIXTURE, items, scan } from './catalog-helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, PAGE_MODES } from './web-browser';

const run = promisify(execFile);
const missing = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v calibredb'], { encoding: 'utf8' });
    return HAS_CHROMIUM ? null : `${CHROMIUM} is absent (apt-get install -y chromium)`;
  } catch {
    return 'calibredb is not installed (apt-get install calibre)';
  }
})();

const ROOTS = mkdtempSync(join(tmpdir(), 'bindery-calibre-web-'));
process.env.LIBRARY_ROOTS = ROOTS;
afterAll(() => rmSync(ROOTS, { recursive: true, force: true }));

const EPUB = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
const EPUB2 = join(FIXTURE, 'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub');
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>';

const modes = missing ? [] : (await availableModes()).filter((m) => PAGE_MODES.includes(m));
const get = instances(modes);

let browser: Browser;
beforeAll(async () => {
  if (!missing) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(missing !== null)(`calibre in the browser${missing ? ` — skipped: ${missing}` : ''}`, () => {
  describe.each(modes)('%s', (mode) => {
    let call: Call;
    let url: string;
    let admin: Account;
    let reader: Account;
    let lib: string;
    let libraryId: string;
    const ids: Record<number, string> = {};
    const env = { ...process.env, QT_QPA_PLATFORM: 'offscreen', TZ: 'UTC' };
    const calibredb = async (...args: string[]) =>
      (await run('calibredb', [...args, '--library-path', lib], { env: { ...env, CALIBRE_CONFIG_DIRECTORY: join(lib, '..', 'config') } })).stdout;

    beforeAll(async () => {
      const b = await get(mode);
      url = b.url;
      call = api(b);
      admin = await register(call);
      reader = await register(call, { caller: admin.token });
      lib = join(ROOTS, mode, 'calibre');
      mkdirSync(lib, { recursive: true });
      expect(await calibredb('add', EPUB, EPUB2)).toMatch(/Added book ids: 1, 2/);
      await calibredb('add_custom_column', 'read', 'Read', 'bool');
      await calibredb('add_custom_column', 'shelf', 'My Shelf', 'text');
      await calibredb('set_metadata', '1', '--field', 'title:The Lost Key', '--field', 'rating:4.5', '--field', '#read:true', '--field', `#shelf:${HOSTILE}`);
      // an ISBN calibre keeps that is none: the report says it could not be mapped
      await calibredb('set_metadata', '2', '--field', 'identifiers:isbn:12-34');
      libraryId = (await createLibrary(call, admin.token, { name: `Calibre web ${mode}`, folders: [lib], watch: false })).id;
      await scan(call, admin.token, libraryId);
      for (const i of await items(call, admin.token, libraryId)) ids[Number(i.identifiers.calibre)] = i.id;
    }, 300_000);

    it("shows calibre's custom columns on the book page as calibre names them, a hostile value as text", async () => {
      const t = await openAs(browser, url, reader.token);
      try {
        await t.page.goto(`${url}/books/${ids[1]}`);
        const section = t.page.locator('#calibre-columns');
        await section.waitFor();
        expect(await section.locator('h2').textContent()).toBe('From calibre');
        expect(await section.locator('dt').allTextContents()).toEqual(['calibre rating', 'Read', 'My Shelf']);
        expect(await section.locator('dd').allTextContents()).toEqual(['4.5 of 5', 'Yes', HOSTILE]);
        expect(await section.locator('script, img').count()).toBe(0);
        await checkPage(t, 'calibre-book');
      } finally {
        await t.ctx.close();
      }
    }, 120_000);

    it("shows the admin the migration report and imports calibre's ratings and read marks for the person chosen", async () => {
      const t = await openAs(browser, url, admin.token);
      try {
        await t.page.goto(`${url}/admin/libraries`);
        const report = t.page.locator(`#calibre-report-${libraryId}`);
        await report.waitFor();
        expect(await report.locator('[data-calibre="summary"]').textContent()).toMatch(/^2 books and 2 formats taken from calibre/);
        expect(await report.locator('h4').textContent()).toBe('1 value could not be mapped');
        expect(await report.locator('[data-calibre="unmapped"] li').allTextContents()).toEqual([
          'A Garden in Winter: identifiers: isbn "12-34" is not an ISBN; kept as calibre has it',
        ]);
        const rows = await report.locator('[data-calibre="fields"] tbody tr').allTextContents();
        expect(rows).toContain('Rating1');
        expect(rows).toContain('My Shelf (#shelf, text)1');
        await checkPage(t, 'calibre-admin-report');
        await t.page.selectOption(`#calibre-import-${libraryId}-user`, reader.id);
        await t.page.click(`#calibre-import-${libraryId} button[type="submit"]`);
        const said = t.page.locator(`#calibre-import-${libraryId}-outcome`);
        await said.filter({ hasText: 'calibre' }).waitFor();
        expect(await said.textContent()).toBe(`calibre's ratings and read marks for ${reader.username}: 1 rating imported; 1 read mark imported`);
        expect(t.errors).toEqual([]);
      } finally {
        await t.ctx.close();
      }
      expect((await call('GET', `/api/media-items/${ids[1]}/rating`, { token: reader.token })).json.rating).toBe(4.5);
      expect((await call('GET', `/api/media-items/${ids[1]}/progress`, { token: reader.token })).json.finished).toBe(true);
    }, 120_000);
  });
});
