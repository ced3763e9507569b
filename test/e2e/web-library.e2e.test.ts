// The web app's library beyond the grid, in headless Chromium, in both modes: the read-state filter
// (and the list API's `read_status` under it), series and author pages, smart collections built with
// the rule builder and its live preview, custom collections reordered, saved filters of the library.
// A plain user never sees a hidden library's books on these pages; hostile titles, authors and
// series show as text; axe-core finds no serious or critical violation; everything by keyboard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { availableModes, type Bindery } from '../support/bindery';
import { emptyDir } from './catalog-helpers';
import { makeItem, put } from './reading-helpers';
import { api, eventually, instances, register, type Account, type Call } from './helpers';
import { CHROMIUM, checkPage, HAS_CHROMIUM, launch, openAs, tabTo, type Tab, unexpectedErrors, PAGE_MODES } from './web-browser';

declare const document: any;

// both modes, for the API test; the browser tests in PAGE_MODES only (decision 97)
const modes = await availableModes();
const get = instances(modes);
if (!HAS_CHROMIUM) describe.skip(`the web library in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

const HOSTILE = '<script>alert(1)</script>';
const HOSTILE_AUTHOR = '<img src=x onerror=alert(2)> & "Co"';
const HOSTILE_SERIES = '<b>Saga</b>/%2F?#"x"';
const SERIES = 'The Long Road';

for (const mode of modes) {
  describe.skipIf(!HAS_CHROMIUM)(`web library (${mode})`, () => {
    const inBrowser = it.skipIf(!PAGE_MODES.includes(mode));
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let alice: Account;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      expect(admin.role).toBe('admin');
      const lib = async (name: string) => {
        const r = await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [emptyDir()], watch: false } });
        expect(r.status, r.text).toBe(201);
        return r.json.id as string;
      };
      const open = await lib('Open shelf');
      const hidden = await lib('Hidden shelf');
      const add = async (library: string, body: Record<string, unknown>) => {
        ids[body.title as string] = (await makeItem(call, admin, library, body)).id;
      };
      // added out of series order on purpose
      await add(open, { title: 'Road Three', authors: ['Ann Walker'], series: SERIES, series_index: 3, tags: ['travel'] });
      await add(open, { title: 'Road One', authors: ['Ann Walker'], series: SERIES, series_index: 1, tags: ['travel'] });
      await add(open, { title: 'Road Two', authors: ['Ann Walker'], series: SERIES, series_index: 2 });
      await add(open, { title: 'Plain Book', authors: ['Bob Other'] });
      await add(open, { title: HOSTILE, authors: [HOSTILE_AUTHOR], series: HOSTILE_SERIES, series_index: 1 });
      await add(hidden, { title: 'Hidden Road', authors: ['Ann Walker'], series: SERIES, series_index: 4 });
      await add(hidden, { title: 'Secret Saga One', authors: ['Secret Author'], series: 'Secret Saga', series_index: 1 });
      alice = await register(call);
      const g = await call('PUT', `/api/auth/users/${alice.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [open] } });
      expect(g.status, g.text).toBe(200);
      expect((await put(call, alice.token, ids['Road One']!, { percentage: 1 })).status).toBe(200);
      expect((await put(call, alice.token, ids['Road Two']!, { percentage: 0.5 })).status).toBe(200);
    }, 240_000);

    const as = (who: Account, width = 1280): Promise<Tab> => openAs(browser, b.url, who.token, width);
    const titles = (t: Tab, scope = '#grid') => t.page.locator(`${scope} .book-title`).allTextContents();
    const listed = async (who: Account, path: string) => {
      const r = await call('GET', path, { token: who.token });
      expect(r.status, r.text).toBe(200);
      return (r.json.data as { title: string }[]).map((i) => i.title);
    };

    it("the list and search APIs filter by the caller's read state (unread, reading, finished), from the read models, and refuse another value", async () => {
      expect(await listed(alice, '/api/media-items?read_status=finished')).toEqual(['Road One']);
      expect(await listed(alice, '/api/media-items?read_status=reading')).toEqual(['Road Two']);
      expect(await listed(alice, '/api/media-items?read_status=unread')).toEqual([HOSTILE, 'Plain Book', 'Road Three']);
      expect(await listed(alice, '/api/media-items?read_status=unread&sort=-created_at')).toEqual([HOSTILE, 'Plain Book', 'Road Three']);
      expect(await listed(alice, `/api/media-items/search?${new URLSearchParams({ author_filter: '"Ann Walker"', read_status: 'unread' })}`)).toEqual(['Road Three']);
      const s = await call('GET', `/api/media-items/search?${new URLSearchParams({ author_filter: '"Ann Walker"', read_status: 'finished' })}`, { token: alice.token });
      expect(s.json.total).toBe(1);
      // another user's positions are theirs: the admin has read nothing, and sees the hidden library
      expect(await listed(admin, '/api/media-items?read_status=finished')).toEqual([]);
      expect(await listed(admin, '/api/media-items?read_status=unread')).toContain('Hidden Road');
      for (const path of ['/api/media-items?read_status=done', '/api/media-items/search?read_status=read']) {
        const r = await call('GET', path, { token: alice.token });
        expect(r.status, path).toBe(400);
        expect(r.json).toEqual({ error: 'read_status must be one of unread, reading, finished' });
      }
      // a new position moves the book at once (the answer's cache follows the reading projection)
      expect((await put(call, alice.token, ids['Road Three']!, { percentage: 1 })).status).toBe(200);
      await eventually(async () => expect(await listed(alice, '/api/media-items?read_status=finished')).toEqual(['Road One', 'Road Three']));
      expect((await call('DELETE', `/api/media-items/${ids['Road Three']}/progress`, { token: alice.token })).status).toBe(200);
      await eventually(async () => expect(await listed(alice, '/api/media-items?read_status=unread')).toEqual([HOSTILE, 'Plain Book', 'Road Three']));
    });

    inBrowser('library: the read-state filter shows only the books in that state, alone or with other filters, by keyboard', async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/library`);
      expect(await titles(t)).toEqual([HOSTILE, 'Plain Book', 'Road One', 'Road Three', 'Road Two']);
      await tabTo(t.page, '#f-state');
      await t.page.selectOption('#f-state', 'finished');
      await Promise.all([t.page.waitForURL(/state=finished/), t.page.click('#apply')]);
      expect(await titles(t)).toEqual(['Road One']);
      expect(await t.page.inputValue('#f-state')).toBe('finished');
      await checkPage(t, `${mode}-library-read-state`);
      await t.page.selectOption('#f-state', 'reading');
      await Promise.all([t.page.waitForURL(/state=reading/), t.page.click('#apply')]);
      expect(await titles(t)).toEqual(['Road Two']);
      await t.page.goto(`${b.url}/library?author=%22Ann+Walker%22&state=unread`);
      expect(await titles(t)).toEqual(['Road Three']);
      // an unknown state is no filter
      await t.page.goto(`${b.url}/library?state=bogus`);
      expect((await titles(t)).length).toBe(5);
      expect(await t.page.content()).not.toContain('Hidden Road');
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });

    inBrowser(
      'series and author pages: linked from the book page and the grid, series order with progress (live), only visible books; hostile names are text',
      {
        timeout: 60_000,
      },
      async () => {
        const t = await as(alice);
        await t.page.goto(`${b.url}/books/${ids['Road Two']}`);
        await Promise.all([t.page.waitForURL(`${b.url}/series/The%20Long%20Road`), t.page.click('dd a[href^="/series/"]')]);
        expect(await t.page.textContent('h1')).toBe(SERIES);
        expect(await titles(t)).toEqual(['Road One', 'Road Two', 'Road Three']);
        expect(await t.page.locator('#grid progress').evaluateAll((ps: any[]) => ps.map((p) => p.getAttribute('value')))).toEqual(['100', '50', '0']);
        expect(await t.page.textContent('#series-summary')).toContain('3 books, 1 finished.');
        expect(await t.page.content()).not.toContain('Hidden Road');
        await tabTo(t.page, '#grid a.book-link');
        await checkPage(t, `${mode}-series`);
        // live: a position saved elsewhere moves the book's bar without a reload
        await t.page.waitForSelector('main[data-live-state="open"]');
        expect((await put(call, alice.token, ids['Road Three']!, { percentage: 0.25 })).status).toBe(200);
        await t.page.waitForSelector(`#grid li[data-book="${ids['Road Three']}"] progress[value="25"]`);
        expect((await call('DELETE', `/api/media-items/${ids['Road Three']}/progress`, { token: alice.token })).status).toBe(200);
        await t.page.waitForSelector(`#grid li[data-book="${ids['Road Three']}"] progress[value="0"]`);
        // from the grid: an author's link
        await t.page.goto(`${b.url}/library`);
        const walker = t.page.locator(`li[data-book="${ids['Road One']}"] a.author-link`);
        expect(await walker.getAttribute('href')).toBe('/authors/Ann%20Walker');
        await Promise.all([t.page.waitForURL(`${b.url}/authors/Ann%20Walker`), walker.click()]);
        expect(await t.page.textContent('h1')).toBe('Ann Walker');
        expect(await titles(t)).toEqual(['Road One', 'Road Three', 'Road Two']);
        expect(await t.page.locator('#author-series a').allTextContents()).toEqual([SERIES]);
        expect(await t.page.content()).not.toContain('Hidden Road');
        await checkPage(t, `${mode}-author`);
        // hostile names: links URL-encoded whole, pages showing them as text
        await t.page.goto(`${b.url}/books/${ids[HOSTILE]}`);
        const authorLink = t.page.locator('#book-authors a');
        expect(await authorLink.getAttribute('href')).toBe(`/authors/${encodeURIComponent(HOSTILE_AUTHOR)}`);
        await Promise.all([t.page.waitForURL(/\/authors\//), authorLink.click()]);
        expect(await t.page.textContent('h1')).toBe(HOSTILE_AUTHOR);
        expect(await titles(t)).toEqual([HOSTILE]);
        const seriesLink = t.page.locator(`li[data-book="${ids[HOSTILE]}"] a.series-link`);
        expect(await seriesLink.textContent()).toBe(HOSTILE_SERIES);
        expect(await seriesLink.getAttribute('href')).toBe(`/series/${encodeURIComponent(HOSTILE_SERIES)}`);
        await Promise.all([t.page.waitForURL(/\/series\//), seriesLink.click()]);
        expect(await t.page.textContent('h1')).toBe(HOSTILE_SERIES);
        expect(await titles(t)).toEqual([HOSTILE]);
        expect(await t.page.locator('main img').count()).toBe(0);
        await checkPage(t, `${mode}-series-hostile`);
        // a series or author of a hidden library does not exist for alice; nor an unknown one
        for (const path of ['/series/Secret%20Saga', '/authors/Secret%20Author', '/series/Nothing%20Here']) {
          const r = await t.page.goto(`${b.url}${path}`);
          expect(r?.status(), path).toBe(404);
          expect(await t.page.textContent('h1')).toBe('Not found');
          expect(await t.page.content()).not.toContain('Secret Saga One');
        }
        expect(unexpectedErrors(t.errors, [404])).toEqual([]);
        expect(t.dialogs).toEqual([]);
        await t.ctx.close();
        // the admin sees every library's books of the series
        const a = await as(admin);
        await a.page.goto(`${b.url}/series/The%20Long%20Road`);
        expect(await titles(a)).toEqual(['Road One', 'Road Two', 'Road Three', 'Hidden Road']);
        expect((await a.page.goto(`${b.url}/series/Secret%20Saga`))?.status()).toBe(200);
        expect(await titles(a)).toEqual(['Secret Saga One']);
        await a.ctx.close();
      },
    );

    inBrowser('smart collections: the rule builder previews live as rules change; the created collection holds the matching books', { timeout: 90_000 }, async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/collections`);
      /** The preview shows this count and these first titles (what it showed instead, on failure). */
      const preview = async (text: string, first?: string[]) => {
        try {
          await t.page.waitForFunction(
            ([s, want]: [string, string[] | null]) =>
              document.getElementById('preview-count')?.textContent === s &&
              (want === null || JSON.stringify([...document.querySelectorAll('#smart-preview .book-title')].map((e: any) => e.textContent)) === JSON.stringify(want)),
            [text, first ?? null] as [string, string[] | null],
            { timeout: 10_000 },
          );
        } catch {
          expect({ preview: await t.page.innerHTML('#smart-preview'), rows: await t.page.innerHTML('#rule-rows'), errors: t.errors }).toEqual({ preview: text, first });
        }
      };
      const rows = () => t.page.locator('#rule-rows .rule-row');
      const row = (n: number) => rows().nth(n);
      // a new or redrawn row answers once htmx has set it up (it drops `htmx-added` then): before that a
      // change made at test speed would be missed
      /** Sets row n's field (or operator); the server redraws the row for it. */
      const choose = async (n: number, what: 'field' | 'op', value: string) => {
        await row(n).locator(`select[name^="${what}-"]`).selectOption(value);
        await t.page.waitForSelector(`#rule-rows .rule-row:nth-child(${n + 1})[data-${what}="${value}"]:not(.htmx-added)`);
      };
      const rowCount = (n: number) => t.page.waitForFunction((k: number) => document.querySelectorAll('#rule-rows .rule-row:not(.htmx-added)').length === k, n);
      await tabTo(t.page, '#add-rule');
      await checkPage(t, `${mode}-collections-smart`);
      await t.page.fill('#smart-name', 'Walker <smart>');
      // author contains "walker": the three books alice may see (not the hidden one)
      await choose(0, 'field', 'author');
      await row(0).locator('input[name^="value-"]').fill('walker');
      await preview('3 books match.', ['Road One', 'Road Three', 'Road Two']);
      // and unread: one (added by keyboard)
      await t.page.focus('#add-rule');
      await t.page.keyboard.press('Enter');
      await rowCount(2);
      await choose(1, 'field', 'read_status');
      expect(await row(1).locator('select[name^="op-"] option').allTextContents()).toEqual(['is', 'is not']);
      await preview('1 book matches.', ['Road Three']);
      // any of them: the three, and the other two unread books
      await t.page.selectOption('#smart-match', 'any');
      await preview('5 books match.');
      await t.page.selectOption('#smart-match', 'all');
      await preview('1 book matches.', ['Road Three']);
      // a third row narrows it to nothing; removing it brings the book back
      await t.page.click('#add-rule');
      await rowCount(3);
      await choose(2, 'field', 'year');
      await choose(2, 'op', 'gt');
      await row(2).locator('input[name^="value-"]').fill('3000');
      await preview('0 books match.', []);
      await row(2).locator('button').click();
      await rowCount(2);
      await preview('1 book matches.', ['Road Three']);
      // the library field offers only the libraries alice may see
      await t.page.click('#add-rule');
      await rowCount(3);
      await choose(2, 'field', 'library');
      expect(await row(2).locator('select[name^="value-"] option').allTextContents()).toEqual(['Open shelf']);
      await choose(2, 'op', 'not_equals');
      await preview('0 books match.', []);
      await row(2).locator('button').click();
      await rowCount(2);
      await preview('1 book matches.', ['Road Three']);
      // reading instead of unread
      await row(1).locator('select[name^="value-"]').selectOption('reading');
      await preview('1 book matches.', ['Road Two']);
      await Promise.all([t.page.waitForEvent('load'), t.page.click('#create-smart')]);
      const made = (await call('GET', '/api/collections', { token: alice.token })).json.data.find((c: any) => c.name === 'Walker <smart>');
      expect(made.is_smart).toBe(true);
      expect(made.rules).toEqual({
        match: 'all',
        conditions: [
          { field: 'author', op: 'contains', value: 'walker' },
          { field: 'read_status', op: 'equals', value: 'reading' },
        ],
      });
      const li = t.page.locator(`li[data-collection="${made.id}"]`);
      expect(await li.locator('.collection-link').textContent()).toBe('Walker <smart>');
      expect(await li.locator('.badge').textContent()).toBe('smart');
      await t.page.goto(`${b.url}/collections/${made.id}`);
      expect(await titles(t)).toEqual(['Road Two']);
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });

    inBrowser('custom collections reorder with move up and down (also by keyboard); the order persists after a reload', async () => {
      const bob = await register(call);
      for (const name of ['Alpha', 'Beta', 'Gamma']) expect((await call('POST', '/api/collections', { token: bob.token, body: { name } })).status).toBe(201);
      const own = async () => ((await call('GET', '/api/collections', { token: bob.token })).json.data as any[]).filter((c) => !c.is_system);
      const id = Object.fromEntries((await own()).map((c) => [c.name, c.id as string]));
      const t = await as(bob);
      await t.page.goto(`${b.url}/collections`);
      const shown = () => t.page.locator('#own-collections .collection-link').allTextContents();
      expect(await shown()).toEqual(['Alpha', 'Beta', 'Gamma']);
      expect(await t.page.locator(`#up-${id.Alpha}`).isDisabled()).toBe(true);
      expect(await t.page.locator(`#down-${id.Gamma}`).isDisabled()).toBe(true);
      await Promise.all([t.page.waitForEvent('load'), t.page.click(`#down-${id.Alpha}`)]);
      expect(await shown()).toEqual(['Beta', 'Alpha', 'Gamma']);
      await tabTo(t.page, `#up-${id.Gamma}`);
      await Promise.all([t.page.waitForEvent('load'), t.page.keyboard.press('Enter')]);
      expect(await shown()).toEqual(['Beta', 'Gamma', 'Alpha']);
      await t.page.reload();
      expect(await shown()).toEqual(['Beta', 'Gamma', 'Alpha']);
      expect((await own()).map((c) => c.name)).toEqual(['Beta', 'Gamma', 'Alpha']);
      expect((await own()).map((c) => c.priority)).toEqual([100, 101, 102]);
      await checkPage(t, `${mode}-collections-reordered`);
      await t.ctx.close();
    });

    inBrowser('saved filters: the current library query saved under a name, listed as a link that applies it, deleted', async () => {
      const t = await as(alice);
      await t.page.goto(`${b.url}/library?author=%22Ann+Walker%22&state=unread`);
      // the saved filters arrive just after the page
      expect(await t.page.textContent('#no-saved')).toBe('None yet.');
      await tabTo(t.page, '#filter-name');
      await t.page.keyboard.type(HOSTILE);
      await Promise.all([t.page.waitForEvent('load'), t.page.keyboard.press('Enter')]);
      const saved = (await call('GET', '/api/saved-filters?resource_type=media_items', { token: alice.token })).json.data;
      expect(saved.length).toBe(1);
      expect(saved[0].name).toBe(HOSTILE);
      expect(saved[0].filter).toEqual({ q: '', library: '', author: '"Ann Walker"', series: '', format: '', tag: '', state: 'unread', sort: 'title' });
      const link = t.page.locator(`li[data-filter="${saved[0].id}"] a.saved-link`);
      expect(await link.textContent()).toBe(HOSTILE);
      await checkPage(t, `${mode}-library-saved-filters`);
      await t.page.goto(`${b.url}/library`);
      expect((await titles(t)).length).toBe(5);
      await link.waitFor();
      await Promise.all([t.page.waitForURL(/state=unread/), link.click()]);
      expect(await titles(t)).toEqual(['Road Three']);
      expect(await t.page.inputValue('#f-author')).toBe('"Ann Walker"');
      // another user does not see it
      const a = await as(admin);
      await a.page.goto(`${b.url}/library`);
      await a.page.waitForSelector('#save-filter');
      expect(await a.page.locator('#saved-list').count()).toBe(0);
      await a.ctx.close();
      await Promise.all([t.page.waitForEvent('load'), t.page.click(`#delete-filter-${saved[0].id}`)]);
      expect(await t.page.textContent('#no-saved')).toBe('None yet.');
      expect((await call('GET', '/api/saved-filters', { token: alice.token })).json.data).toEqual([]);
      expect(t.errors).toEqual([]);
      expect(t.dialogs).toEqual([]);
      await t.ctx.close();
    });
  });
}
