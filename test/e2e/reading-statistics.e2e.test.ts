// Reading statistics (decision 120), in both modes: a reader reads three books from the web (with its
// active time), KOReader's stock sync and a Kobo (with its SpentReadingMinutes), and has a month of
// earlier saves from all three in reading's log (appended as reading appends them, with earlier
// times: no request can be made in the past). Their time and books per day, in their time zone,
// equal what this test computes from the `progress-saved` events of the log with the rule of
// decision 120; a rebuild of the reading projection (and of the identity one) gives the same figures;
// another reader sees none of them. The admin's figures count everyone's reading and name only the
// person who lets admins see theirs (share_statistics, set on the profile); a quiet reader is in the
// totals alone. The pages in Chromium (embedded): the person's and the admin's, axe clean, a hostile
// title as text, the quiet reader's name nowhere; the profile's checkbox sets the sharing.
import { createHash, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reading, type StoredEvent } from '@bindery/contracts';
import { READING_SCHEMA } from '@bindery/reading';
import { EventStore, eventSchemas, type NoTables, openPGlite, openPostgres } from '@bindery/platform';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { api, eventually, register, type Account, type Call } from './helpers';
import { createLibrary, emptyDir, items, settled } from './catalog-helpers';
import { KOBO_UA, koboSync, smallEpub } from './kobo-helpers';
import { put } from './reading-helpers';
import { HAS_CHROMIUM, PAGE_MODES, checkPage, launch, openAs } from './web-browser';

const modes = await availableModes();
const ZONE = 'Pacific/Auckland';
const CAP = 600;
const HOSTILE = '<script>alert("stats")</script> & <b>bold</b>';
const md5 = (s: string) => createHash('md5').update(s).digest('hex');
const readingEvents = eventSchemas(Reading.ReadingEvents);
type Saved = Extract<Reading.ReadingEvent, { type: 'reading.progress-saved.v1' }>['data'];

/** The day of `iso` in `zone`, YYYY-MM-DD. */
const dayOf = (iso: string, zone = ZONE) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));

/**
 * Decision 120's figures, computed here from the saves: per day the seconds, the books and the share
 * read; per device the seconds. Time per (book, device): the rise of the device's own total where it
 * states one, else its active seconds where it states them, else the gap since its previous save
 * capped at CAP. The share: the rise of the book's percentage since its previous save (any device).
 */
function expected(saves: { position: number; d: Saved }[], year: number, zone = ZONE) {
  const sorted = [...saves].sort((a, b) => Date.parse(a.d.progress.updated_at) - Date.parse(b.d.progress.updated_at) || a.position - b.position);
  const byPair = new Map<string, typeof sorted>();
  for (const s of sorted) {
    const k = `${s.d.media_item_id}|${s.d.progress.device}`;
    byPair.set(k, [...(byPair.get(k) ?? []), s]);
  }
  const secondsOf = new Map<number, number>();
  for (const list of byPair.values()) {
    const spent = list.some((s) => s.d.spent_seconds !== undefined);
    const active = list.some((s) => s.d.active_seconds !== undefined);
    let high = 0;
    list.forEach((s, i) => {
      let n = 0;
      if (spent) {
        if (s.d.spent_seconds !== undefined) n = Math.max(0, s.d.spent_seconds - high);
      } else if (active) n = s.d.active_seconds ?? 0;
      else if (i > 0) n = Math.min(CAP, (Date.parse(s.d.progress.updated_at) - Date.parse(list[i - 1]!.d.progress.updated_at)) / 1000);
      if (s.d.spent_seconds !== undefined) high = Math.max(high, s.d.spent_seconds);
      secondsOf.set(s.position, n);
    });
  }
  const lastPct = new Map<string, number>();
  const days = new Map<string, { seconds: number; books: Set<string>; progress: number }>();
  const devices = new Map<string, number>();
  const months = new Map<string, number>();
  const items = new Map<string, number>();
  for (const s of sorted) {
    const gained = Math.max(0, s.d.progress.percentage - (lastPct.get(s.d.media_item_id) ?? 0));
    lastPct.set(s.d.media_item_id, s.d.progress.percentage);
    const date = dayOf(s.d.progress.updated_at, zone);
    if (!date.startsWith(`${year}-`)) continue;
    months.set(date.slice(0, 7), (months.get(date.slice(0, 7)) ?? 0) + secondsOf.get(s.position)!);
    items.set(s.d.media_item_id, (items.get(s.d.media_item_id) ?? 0) + secondsOf.get(s.position)!);
    const day = days.get(date) ?? { seconds: 0, books: new Set<string>(), progress: 0 };
    day.seconds += secondsOf.get(s.position)!;
    day.books.add(s.d.media_item_id);
    day.progress += gained;
    days.set(date, day);
    devices.set(s.d.progress.device, (devices.get(s.d.progress.device) ?? 0) + secondsOf.get(s.position)!);
  }
  return {
    days: [...days.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([date, d]) => ({ date, seconds: Math.round(d.seconds), books: d.books.size, progress: Math.round(d.progress * 10_000) / 10_000 })),
    seconds: Math.round([...days.values()].reduce((n, d) => n + d.seconds, 0)),
    devices: Object.fromEntries([...devices.entries()].map(([k, v]) => [k, Math.round(v)])),
    /** unrounded: the library's figures add people up before rounding */
    months,
    items,
  };
}

/** The saves of `user` in a log, with their positions. */
const savesOf = (log: StoredEvent[], user: string) =>
  log.flatMap((ev) => {
    const e = readingEvents.decode(ev);
    return e?.type === 'reading.progress-saved.v1' && e.data.user_id === user ? [{ position: ev.position, d: e.data }] : [];
  });

describe.each(modes)('reading statistics (%s)', (mode) => {
  let b: Bindery;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let other: Account;
  let quiet: Account;
  let web: Record<string, any>;
  let ko: Record<string, any>;
  let kb: Record<string, any>;
  let year: number;
  let want: ReturnType<typeof expected>;
  /** the admin's figures as the log gives them: the reader's and the quiet reader's, in UTC */
  let library: { reader: ReturnType<typeof expected>; quiet: ReturnType<typeof expected> };

  beforeAll(async () => {
    b = await startBindery(mode);
    call = api(b);
    admin = await register(call);
    reader = await register(call);
    other = await register(call);
    quiet = await register(call);
    const dir = emptyDir();
    writeFileSync(join(dir, 'web.epub'), smallEpub(HOSTILE, 'Wendy Web', randomUUID()));
    writeFileSync(join(dir, 'ko.epub'), smallEpub('Kept by KOReader', 'Karl Ko', randomUUID()));
    writeFileSync(join(dir, 'kobo.epub'), smallEpub('Kobo Book', 'Kira Kobo', randomUUID()));
    const lib = await createLibrary(call, admin.token, { name: `Stats ${mode}`, folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
    const list = await items(call, admin.token, lib.id);
    const by = (f: string) => list.find((i) => i.file_path === f)!;
    web = by('web.epub');
    ko = by('ko.epub');
    kb = by('kobo.epub');
    const tz = await call('PUT', '/api/auth/profile', { token: reader.token, body: { timezone: ZONE } });
    expect(tz.status, tz.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await b?.stop();
  });

  it('takes positions from the web, KOReader and a Kobo, with the time the devices count', async () => {
    // the web reader: its active seconds with each save
    for (const [percentage, active_seconds] of [
      [0.1, 120],
      [0.2, 300],
      [0.35, 90],
    ] as const)
      expect((await put(call, reader.token, web.id, { percentage, client: 'web', device: 'laptop', active_seconds })).json.status).toBe('saved');
    // a reading time that is not one: 400, nothing saved
    for (const active_seconds of [-1, 86_401, 1.5, '60', true]) {
      const bad = await put(call, reader.token, web.id, { percentage: 0.4, active_seconds });
      expect(bad.status, String(active_seconds)).toBe(400);
      expect(bad.json).toEqual({ error: 'active_seconds must be a whole number of seconds from 0 to 86400' });
    }
    // the quiet reader reads the web book too, and does not share their figures
    for (const [percentage, active_seconds] of [
      [0.1, 200],
      [0.2, 100],
    ] as const)
      expect((await put(call, quiet.token, web.id, { percentage, client: 'web', device: 'tablet', active_seconds })).json.status).toBe('saved');
    // KOReader's stock sync: no time of its own (the gaps count)
    const headers = { 'x-auth-user': reader.username, 'x-auth-key': md5(reader.password), accept: 'application/vnd.koreader.v1+json' };
    for (const percentage of [0.05, 0.15, 0.25]) {
      const r = await call('PUT', '/syncs/progress', {
        headers,
        body: {
          document: ko.formats[0].partial_md5,
          progress: '/body/DocFragment[1]/body/p/text().0',
          percentage,
          device: 'Kobo_frost',
          device_id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
        },
      });
      expect(r.status, r.text).toBe(200);
    }
    // a Kobo: its SpentReadingMinutes, a total for the book
    const dev = await call('POST', '/api/devices/kobo', { token: reader.token, body: { name: 'Libra 2' } });
    expect(dev.status, dev.text).toBe(201);
    const kobo = `/kobo/${dev.json.kobo_url.split('/kobo/')[1]}`;
    await koboSync(call, kobo, null);
    for (const [pct, minutes] of [
      [30, 5],
      [100, 47],
    ] as const) {
      const r = await call('PUT', `${kobo}/v1/library/${kb.id}/state`, {
        headers: { 'user-agent': KOBO_UA },
        body: {
          ReadingStates: [
            { CurrentBookmark: { ProgressPercent: pct }, Statistics: { SpentReadingMinutes: minutes }, StatusInfo: { Status: pct === 100 ? 'Finished' : 'Reading' } },
          ],
        },
      });
      expect(r.status, r.text).toBe(200);
      expect(r.json.UpdateResults[0].StatisticsResult).toEqual({ Result: 'Success' });
    }
    const spent = await call('PUT', `${kobo}/v1/library/${kb.id}/state`, {
      headers: { 'user-agent': KOBO_UA },
      body: { ReadingStates: [{ CurrentBookmark: { ProgressPercent: 100 }, Statistics: { SpentReadingMinutes: 'many' } }] },
    });
    expect(spent.status).toBe(400);
  }, 120_000);

  it('a month of earlier saves lands in the log, and the figures are the log’s', async () => {
    // embedded: the one process holds the database; distributed: the services stop so the relay starts after the append
    await Promise.all(b.procs.map((p) => p.stop()));
    const database = mode === 'embedded' ? await openPGlite(join(b.env.DATA_DIR!, 'db')) : await openPostgres(b.env.DATABASE_URL!);
    try {
      const store = new EventStore<NoTables>(database.db as never, READING_SCHEMA);
      const log = await store.readAll(0, 1_000_000);
      const mine = (evs: StoredEvent[]) => savesOf(evs, reader.id);
      const now = mine(log);
      // three from the web, three from KOReader, two from the Kobo
      expect(now.map((s) => s.d.progress.device).sort()).toEqual([
        'Kobo_frost a1b2c3d4',
        'Kobo_frost a1b2c3d4',
        'Kobo_frost a1b2c3d4',
        'Libra 2',
        'Libra 2',
        'laptop',
        'laptop',
        'laptop',
      ]);
      // the earlier month: each day two or three saves of the web book and the KOReader book, minutes
      // apart, and every third day one of the Kobo book with the Kobo's own total (below its 47 minutes)
      const template = (item: string) => now.find((s) => s.d.media_item_id === item)!.d;
      const month: Reading.ReadingEvent[] = [];
      const start = Date.now() - 30 * 86_400_000;
      for (let day = 0; day < 28; day += day % 5 === 4 ? 2 : 1) {
        for (const [k, item] of [web.id, ko.id].entries()) {
          for (let n = 0; n < 3 - k; n++) {
            const at = new Date(start + day * 86_400_000 + k * 3_600_000 + n * (4 + day) * 60_000).toISOString();
            const t = template(item);
            const percentage = Math.min(0.3, (day * 3 + n) / 300);
            const data: Saved = {
              ...t,
              progress: { ...t.progress, percentage, finished: false, updated_at: at, created_at: at },
              history: { ...t.history!, percentage, recorded_at: at },
              ...(item === web.id ? { active_seconds: 60 * (n + 1) } : {}),
            };
            month.push({ type: 'reading.progress-saved.v1', data });
          }
        }
        if (day % 3 === 0) {
          const at = new Date(start + day * 86_400_000 + 7_200_000).toISOString();
          const t = template(kb.id);
          const percentage = day / 100;
          month.push({
            type: 'reading.progress-saved.v1',
            data: {
              ...t,
              progress: { ...t.progress, percentage, finished: false, updated_at: at, created_at: at },
              ...(t.history ? { history: { ...t.history, percentage, recorded_at: at } } : {}),
              spent_seconds: 60 * (day + 1),
            },
          });
        }
      }
      readingEvents.check(month);
      await database.db.transaction().execute((trx) => store.append(trx as never, `user:${reader.id}`, 'any', month));
      const all = await store.readAll(0, 1_000_000);
      const after = mine(all);
      year = Number(dayOf(new Date().toISOString()).slice(0, 4));
      want = expected(after, year);
      // the library's days are UTC's; its year is the one asked
      library = { reader: expected(after, year, 'UTC'), quiet: expected(savesOf(all, quiet.id), year, 'UTC') };
    } finally {
      await database.close();
    }
    await b.restart();
    const got = await eventually(async () => {
      const r = await call('GET', `/api/me/statistics?year=${year}`, { token: reader.token });
      expect(r.status, r.text).toBe(200);
      expect(r.json.days).toEqual(want.days);
      return r.json;
    }, 60_000);
    expect(got.timezone).toBe(ZONE);
    expect(got.totals.seconds).toBe(want.seconds);
    expect(got.totals.days_read).toBe(want.days.length);
    expect(Object.fromEntries(got.by_device.map((d: { name: string; seconds: number }) => [d.name, d.seconds]))).toEqual(want.devices);
    // today: the web's, KOReader's and the Kobo's book
    expect(Math.max(...want.days.map((d) => d.books))).toBe(3);
    expect(got.totals.books_finished).toBe(1);
    if (dayOf(new Date(Date.now() - 30 * 86_400_000).toISOString()).startsWith(`${year}-`)) {
      // the Kobo's own count: its highest total, 47 minutes, not the gaps between its states nor the sum of its totals
      expect(want.devices['Libra 2']).toBe(47 * 60);
      expect(got.books.find((x: { id: string }) => x.id === kb.id)).toMatchObject({ title: 'Kobo Book', seconds: 47 * 60, progress: 1 });
    }
    expect(got.by_author.map((a: { name: string }) => a.name).sort()).toEqual(['Karl Ko', 'Kira Kobo', 'Wendy Web']);
  }, 240_000);

  /** The admin's figures as the log gives them, the reader named while `sharing`. */
  function libraryWant(sharing: boolean) {
    const people = [library.reader, library.quiet];
    const sum = (f: (p: ReturnType<typeof expected>) => number) => people.reduce((n, p) => n + f(p), 0);
    const titles: Record<string, string> = { [web.id]: HOSTILE, [ko.id]: 'Kept by KOReader', [kb.id]: 'Kobo Book' };
    const ids = [...new Set(people.flatMap((p) => [...p.items.keys()]))];
    return {
      year,
      sharing: sharing ? 1 : 0,
      active_readers: people.filter((p) => p.items.size > 0).length,
      seconds: Math.round(sum((p) => [...p.months.values()].reduce((n, v) => n + v, 0))),
      months: Array.from({ length: 12 }, (_, i) => {
        const month = `${year}-${String(i + 1).padStart(2, '0')}`;
        return { month, seconds: Math.round(sum((p) => p.months.get(month) ?? 0)), readers: people.filter((p) => p.months.has(month)).length };
      }),
      books: ids
        .map((id) => ({ id, title: titles[id]!, readers: people.filter((p) => p.items.has(id)).length, seconds: Math.round(sum((p) => p.items.get(id) ?? 0)) }))
        .sort((x, y) => y.readers - x.readers || y.seconds - x.seconds || x.id.localeCompare(y.id)),
      readers: sharing ? [{ username: reader.username, seconds: library.reader.seconds, days_read: library.reader.days.length, books: library.reader.items.size }] : [],
    };
  }

  it('a person lets admins see their figures on the profile (a JSON boolean); the admin sees them by name, the quiet reader only in the totals', async () => {
    for (const share_statistics of ['yes', 1, [], {}]) {
      const bad = await call('PUT', '/api/auth/profile', { token: reader.token, body: { share_statistics } });
      expect(bad.status, JSON.stringify(share_statistics)).toBe(400);
      expect(bad.json).toEqual({ error: 'share_statistics must be true or false' });
    }
    const before = await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token });
    expect(before.status, before.text).toBe(200);
    // no one shares yet: everyone counted, no one named
    expect(before.json).toEqual(libraryWant(false));
    expect(before.json.active_readers).toBe(2);
    const on = await call('PUT', '/api/auth/profile', { token: reader.token, body: { share_statistics: true } });
    expect(on.status, on.text).toBe(200);
    expect(on.json).toEqual({ message: 'profile updated successfully' });
    await eventually(async () => {
      const p = await call('GET', '/api/auth/profile', { token: reader.token });
      expect(p.json.share_statistics).toBe(true);
    });
    // the others' profiles do not say it
    expect((await call('GET', '/api/auth/profile', { token: quiet.token })).json).not.toHaveProperty('share_statistics');
    const r = await eventually(async () => {
      const a = await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token });
      expect(a.json.sharing).toBe(1);
      return a;
    });
    expect(r.json).toEqual(libraryWant(true));
    expect(r.json.readers[0].seconds).toBeGreaterThan(0);
    expect(r.text).not.toContain(quiet.username);
    expect(r.json.books.find((x: { id: string }) => x.id === web.id).readers).toBe(2);
  }, 120_000);

  it('a rebuild of the reading projection, and of the identity one, gives the same figures', async () => {
    const before = await call('GET', `/api/me/statistics?year=${year}`, { token: reader.token });
    const adminBefore = await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token });
    for (const projection of ['reading', 'identity']) {
      const r = await call('POST', `/api/admin/projections/${projection}/rebuild?wait=true`, { token: admin.token });
      expect(r.status, r.text).toBe(200);
    }
    const again = await call('GET', `/api/me/statistics?year=${year}`, { token: reader.token });
    expect(again.json).toEqual(before.json);
    expect(again.json.days).toEqual(want.days);
    const adminAgain = await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token });
    expect(adminAgain.json).toEqual(adminBefore.json);
    expect(adminAgain.json).toEqual(libraryWant(true));
  }, 120_000);

  it('another reader sees only their own (none); a bad year is 400; no one signed out sees any', async () => {
    const r = await call('GET', `/api/me/statistics?year=${year}`, { token: other.token });
    expect(r.status).toBe(200);
    expect(r.json.days).toEqual([]);
    expect(r.json.totals.seconds).toBe(0);
    expect(r.json.books).toEqual([]);
    for (const y of ['abc', '1969', '20255', '-2025', '2025.5']) {
      const bad = await call('GET', `/api/me/statistics?year=${y}`, { token: reader.token });
      expect(bad.status, y).toBe(400);
      expect(bad.json).toEqual({ error: 'year must be a whole number from 1970 to 9999' });
    }
    expect((await call('GET', '/api/me/statistics')).status).toBe(401);
  });

  it("a person who stops sharing is in the admin's totals alone; a user may not ask", async () => {
    const off = await call('PUT', '/api/auth/profile', { token: reader.token, body: { share_statistics: false } });
    expect(off.status, off.text).toBe(200);
    const r = await eventually(async () => {
      const a = await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token });
      expect(a.json.sharing).toBe(0);
      return a;
    });
    expect(r.json).toEqual(libraryWant(false));
    expect(r.text).not.toContain(reader.username);
    expect((await call('GET', '/api/auth/profile', { token: reader.token })).json).not.toHaveProperty('share_statistics');
    // the consent is the person's own: an admin's update by id does not give it (the rest applies)
    const byId = await call('PUT', `/api/auth/profile/${quiet.id}`, { token: admin.token, body: { share_statistics: true, theme: 'paper' } });
    expect(byId.status, byId.text).toBe(200);
    await eventually(async () => expect((await call('GET', '/api/auth/profile', { token: quiet.token })).json.theme).toBe('paper'));
    expect((await call('GET', '/api/auth/profile', { token: quiet.token })).json).not.toHaveProperty('share_statistics');
    expect((await call('GET', `/api/admin/statistics?year=${year}`, { token: admin.token })).json).toEqual(libraryWant(false));
    const denied = await call('GET', '/api/admin/statistics', { token: reader.token });
    expect(denied.status).toBe(403);
    expect(denied.json).toEqual({ error: 'admin access required' });
    expect((await call('GET', '/api/admin/statistics?year=1969', { token: admin.token })).json).toEqual({ error: 'year must be a whole number from 1970 to 9999' });
  });

  it.runIf(HAS_CHROMIUM && PAGE_MODES.includes(mode))(
    'the page: a chart with its table, a hostile title as text, axe clean',
    async () => {
      const browser = await launch();
      try {
        const t = await openAs(browser, b.url, reader.token);
        const res = await t.page.goto(`${b.url}/statistics?year=${year}`);
        expect(res?.status()).toBe(200);
        const svg = t.page.locator('svg[role="img"]');
        expect(await svg.count()).toBe(1);
        expect(await svg.locator('title').textContent()).toBe(`Minutes read each month of ${year}`);
        expect(await t.page.locator('table caption', { hasText: `Each month of ${year}` }).count()).toBe(1);
        expect(await t.page.locator('th[scope="row"]', { hasText: HOSTILE }).count()).toBe(1);
        expect(await t.page.locator('main script, main b').count()).toBe(0);
        expect(await t.page.locator('tbody tr').count()).toBeGreaterThan(want.days.length);
        expect(await t.page.locator('nav a[href="/statistics"]').count()).toBe(1);
        await checkPage(t, `statistics-${mode}`);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
  it.runIf(HAS_CHROMIUM && PAGE_MODES.includes(mode))(
    "the profile's checkbox lets admins see the person's figures, and unchecked stops it",
    async () => {
      const browser = await launch();
      try {
        const t = await openAs(browser, b.url, reader.token);
        const sharing = async () => (await call('GET', '/api/auth/profile', { token: reader.token })).json.share_statistics ?? false;
        for (const on of [true, false, true]) {
          expect((await t.page.goto(`${b.url}/profile`))?.status()).toBe(200);
          const box = t.page.locator('#share-statistics');
          expect(await box.isChecked()).toBe(!on);
          await box.setChecked(on);
          const answer = t.page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().endsWith('/api/auth/profile'));
          await t.page.click('#save-sharing');
          expect(JSON.parse((await answer).request().postData() ?? '{}')).toEqual({ share_statistics: on });
          await eventually(async () => expect(await sharing()).toBe(on));
        }
        expect((await t.page.goto(`${b.url}/profile`))?.status()).toBe(200);
        expect(await t.page.locator('#share-statistics').isChecked()).toBe(true);
        await checkPage(t, `profile-sharing-${mode}`);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );

  it.runIf(HAS_CHROMIUM && PAGE_MODES.includes(mode))(
    "the admin's page: the library's chart with its table, the sharing reader by name, the quiet one nowhere; a user's 404",
    async () => {
      const browser = await launch();
      try {
        const t = await openAs(browser, b.url, admin.token);
        const res = await t.page.goto(`${b.url}/admin/statistics?year=${year}`);
        expect(res?.status()).toBe(200);
        const svg = t.page.locator('svg[role="img"]');
        expect(await svg.count()).toBe(1);
        expect(await svg.locator('title').textContent()).toBe(`Minutes read in the library each month of ${year}`);
        expect(await t.page.locator('table caption', { hasText: `The library’s reading each month of ${year}` }).count()).toBe(1);
        expect(await t.page.locator('#admin-stats-readers').textContent()).toBe('2');
        expect(await t.page.locator('#admin-stats-books th[scope="row"]', { hasText: HOSTILE }).count()).toBe(1);
        expect(await t.page.locator('#admin-stats-people th[scope="row"]').allTextContents()).toEqual([reader.username]);
        expect(await t.page.content()).not.toContain(quiet.username);
        expect(await t.page.locator('main script, main b').count()).toBe(0);
        expect(await t.page.locator('nav a[href="/admin/statistics"][aria-current="page"]').count()).toBe(1);
        await checkPage(t, `admin-statistics-${mode}`);
        // reached from the library administration's tabs
        await t.page.goto(`${b.url}/admin/libraries`);
        expect(await t.page.locator('nav a[href="/admin/statistics"]').count()).toBe(1);
        const u = await openAs(browser, b.url, quiet.token);
        expect((await u.page.goto(`${b.url}/admin/statistics`))?.status()).toBe(404);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
