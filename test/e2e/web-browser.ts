// The web app's browser harness: Debian's Chromium driven by playwright-core (one browser per test
// file), a page that records console errors, page errors and dialogs, axe-core run inside the page,
// Tab-key reachability with a visible focus ring, and screenshots at 360 px and 1280 px.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ROOT, type Mode } from '../support/bindery';

// the page's globals, for the functions that run inside it (the test project has no DOM library)
declare const document: any;
declare function getComputedStyle(e: unknown): any;

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const SHOTS = join(ROOT, 'test/.tmp/screenshots');
/**
 * The modes of the browser files other than web.e2e and web-first-run: embedded only (decision 97).
 * The pages are the gateway's in both modes; those two files, with the main flows and live updates,
 * run in both. web-library's API test (the read-state filter of the list and search, tested nowhere
 * else) still runs in both modes; only its browser tests keep to these.
 */
export const PAGE_MODES: Mode[] = ['embedded'];

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface Tab {
  ctx: BrowserContext;
  page: Page;
  /** console errors, uncaught page errors and CSP reports, as they happened */
  errors: string[];
  /** alert/confirm/prompt messages: a hostile title must never open one */
  dialogs: string[];
}

export async function open(browser: Browser, width = 1280): Promise<Tab> {
  const ctx = await browser.newContext({ viewport: { width, height: 900 } });
  // a step that waits in vain fails with its selector well before the test's own limit (60 s)
  ctx.setDefaultTimeout(25_000);
  const page = await ctx.newPage();
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (m) => {
    // where a CSP report or a script error came from, when it is not a failed resource load
    if (m.type() === 'error') errors.push(m.text().startsWith('Failed to load resource') ? m.text() : `${m.text()} (at ${m.location().url}:${m.location().lineNumber})`);
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  return { ctx, page, errors, dialogs };
}

/** A tab signed in with `token` (the web app's session cookie) on the server at `url`. */
export async function openAs(browser: Browser, url: string, token: string, width = 1280): Promise<Tab> {
  const t = await open(browser, width);
  await t.ctx.addCookies([{ name: 'token', value: token, url }]);
  return t;
}

/** The bodies of the position writes (`PUT …/progress`) the page sends, as it sends them. */
export function progressWrites(page: Page): Record<string, unknown>[] {
  const writes: Record<string, unknown>[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PUT' && r.url().endsWith('/progress')) writes.push(r.postDataJSON());
  });
  return writes;
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is (injected over CDP, which the page's CSP does not govern). */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const found = (await page.evaluate(async () => {
    const r = await (globalThis as { axe?: any }).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')).slice(0, 3) }));
  })) as { id: string; impact: string; nodes: string[] }[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact} ${v.id}: ${v.nodes.join(', ')}`);
}

/**
 * Presses Tab from the top of the page until the element matching `selector` has the focus; fails
 * when it is not reached in `max` presses or shows no focus outline.
 */
export async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  await page.evaluate(() => document.activeElement?.blur());
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) {
      const outline = await page.evaluate(() => {
        const st = getComputedStyle(document.activeElement!);
        return `${st.outlineStyle} ${st.outlineWidth}`;
      });
      expect(outline, `${selector} has a visible focus outline`).toMatch(/^solid [1-9]/);
      return;
    }
  }
  throw new Error(`${selector} was not reached with ${max} Tab presses`);
}

/** Full-page screenshots at 360 px and 1280 px as test/.tmp/screenshots/<name>-<width>.png; the page is left at 1280 px. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const width of [360, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    // nothing may be wider than the phone's screen
    if (width === 360) expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} fits 360 px`).toBeLessThanOrEqual(360);
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
  }
}

/**
 * Console errors other than Chromium's own network line for an answer the test expects (a wrong
 * password's 401, a lock's 429, a page that is not there): those are the API's answers, logged by the browser for any 4xx.
 */
const REASONS: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 429: 'Too Many Requests' };
export const unexpectedErrors = (errors: string[], statuses: number[]) =>
  errors.filter((e) => !statuses.some((s) => e === `Failed to load resource: the server responded with a status of ${s} (${REASONS[s]})`));

/** The checks every page gets: no serious/critical axe violation, no console error, no dialog, landmarks, screenshots. */
export async function checkPage(t: Tab, name: string): Promise<void> {
  expect(await axeProblems(t.page), `${name}: axe`).toEqual([]);
  expect(await t.page.locator('main#main').count(), `${name}: one main landmark`).toBe(1);
  await screenshots(t.page, name);
  expect(t.errors, `${name}: console errors`).toEqual([]);
  expect(t.dialogs, `${name}: dialogs`).toEqual([]);
}
