// The web app in headless Chromium, embedded mode (web-app.ts: first run, sign in and out, the
// pages, live updates; web-distributed.e2e runs the same flows distributed), and the sign-in page
// under the rate limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startBindery, type Bindery } from '../support/bindery';
import { webAppFlows } from './web-app';
import { api, register } from './helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, open, unexpectedErrors } from './web-browser';

declare const document: any;

if (!HAS_CHROMIUM) describe.skip(`the web app in a browser (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

describe.skipIf(!HAS_CHROMIUM)('web app (embedded)', () => webAppFlows('embedded'));

// The sign-in page under the per-address rate limit: its message as the API words it (embedded:
// the limit is the gateway's, the same code in both modes).
describe.skipIf(!HAS_CHROMIUM)('web app sign-in under the rate limit (embedded)', () => {
  let b: Bindery;
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch();
    b = await startBindery('embedded', { AUTH_RATE_LIMIT_MAX: '3', AUTH_RATE_LIMIT_WINDOW_SECONDS: '120' });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await b?.stop();
  });

  it('shows the rate-limit message as the API words it', async () => {
    const call = api(b);
    const u = await register(call); // register has a limit of its own
    const t = await open(browser);
    await t.page.goto(`${b.url}/login`);
    await t.page.fill('#login-name', u.username);
    const attempt = async () => {
      await t.page.fill('#password', 'wrong-passw0rd-1');
      await t.page.evaluate(() => document.getElementById('error').replaceChildren());
      await t.page.click('#submit');
      await t.page.waitForSelector('#error [role="alert"]');
      return (await t.page.textContent('#error'))!;
    };
    for (let i = 0; i < 3; i++) expect(await attempt()).toBe('invalid credentials');
    const limited = await attempt();
    expect(limited).toMatch(/^too many requests: try again in \d+ seconds$/);
    expect(Number(limited.match(/\d+/)![0])).toBeLessThanOrEqual(120);
    expect(unexpectedErrors(t.errors, [401, 429])).toEqual([]);
    await t.ctx.close();
  });
});
