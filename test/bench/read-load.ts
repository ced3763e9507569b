// The reads measured in each mode, with autocannon in its own process: the list page, search with
// a fuzzy author filter and with free text (each connection going round several queries), and the
// profile bracketed by the bare fastify route (bare, profile, bare) for the ratio.
import { createHash } from 'node:crypto';
import { authorName, seriesName } from './gen-library';
import { coresUsed, envNumber, fmt, median, snapshot, waitForQuiet, type LoadGen, type Roles } from './lib';
import type { ReadJob, ReadMeasured } from './read-load-worker';

export interface LoadCfg {
  duration: number;
  warmup: number;
  connections: number;
  rounds: number;
  quietWait: number;
  noisyCores: number;
}

/**
 * The load settings from BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_ROUNDS and
 * BENCH_QUIET_WAIT (`quick`: 5 s measurements after 1 s of warm-up); `rounds` fixes the rounds.
 */
export function loadCfgFromEnv(quick: boolean, rounds?: number): LoadCfg {
  return {
    duration: Math.max(1, envNumber('BENCH_DURATION', quick ? 5 : 10)),
    warmup: envNumber('BENCH_WARMUP', quick ? 1 : 2),
    connections: Math.max(1, envNumber('BENCH_CONNECTIONS', 16)),
    rounds: rounds ?? Math.max(1, envNumber('BENCH_ROUNDS', 1)),
    quietWait: envNumber('BENCH_QUIET_WAIT', 5),
    noisyCores: 0.25,
  };
}

/** Jobs of GET requests with these headers (going round `paths` when given), at the settings' load. */
export const getJobs =
  (cfg: LoadCfg, headers: Record<string, string>) =>
  (url: string, paths?: string[]): ReadJob => ({
    url,
    method: 'GET',
    headers,
    connections: cfg.connections,
    duration: cfg.duration,
    ...(paths ? { paths } : {}),
  });

/** The job of the bare fastify route of the reference server, at the settings' load. */
export const refJob = (ref: { url: string }, cfg: LoadCfg): ReadJob => ({ url: `${ref.url}/ref`, method: 'GET', connections: cfg.connections, duration: cfg.duration });

export interface Row extends ReadMeasured {
  cores: Record<string, number>;
  /** cores used by processes outside this run during the measurement */
  other: number;
  noisy: boolean;
}

export type ReadGen = LoadGen<ReadJob, ReadMeasured>;

export async function measure(gen: ReadGen, cfg: LoadCfg, roles: Roles, job: ReadJob, label: string): Promise<Row> {
  const all: Roles = { pids: new Map([...roles.pids, [gen.pid, 'loadgen']]), databases: roles.databases };
  if (cfg.quietWait > 0) {
    const q = await waitForQuiet(all, cfg.quietWait * 1000);
    if (q.other >= 0.15) console.log(`  (other processes still use ${q.other} cores: measuring anyway)`);
  }
  if (cfg.warmup > 0) await gen.run({ ...job, duration: cfg.warmup });
  const a = snapshot();
  const t0 = performance.now();
  // NaN (no response in the window) comes back over IPC as null
  const m = Object.fromEntries(Object.entries(await gen.run(job)).map(([k, v]) => [k, v === null ? NaN : v])) as ReadMeasured;
  const cores = coresUsed(a, snapshot(), (performance.now() - t0) / 1000, all);
  const other = cores.other ?? 0;
  const noisy = other > cfg.noisyCores;
  const bad = m.non2xx + m.errors + m.timeouts;
  const own = Object.entries(cores)
    .filter(([k, v]) => k !== 'other' && k !== 'orchestrator' && v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  console.log(
    `  ${label.padEnd(30)} ${fmt(m.rps, 0).padStart(6)} req/s  p50 ${fmt(m.p50, 1).padStart(6)}  p95 ${fmt(m.p95, 1).padStart(6)}  p99 ${fmt(m.p99, 1).padStart(6)} ms` +
      `${bad ? `  FAILED non-2xx ${m.non2xx} errors ${m.errors} timeouts ${m.timeouts}` : ''}  cores: ${own}; outside ${other}${noisy ? ' NOISY' : ''}`,
  );
  return { ...m, cores, other, noisy };
}

/** The median of each figure over the rounds (a single round is itself). */
export interface Summary {
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  failures: number;
  noisyRounds: number;
  /** server cores (every role but loadgen, orchestrator, other), median over rounds */
  serverCores: number;
  otherCores: number;
}

export function summarise(rows: Row[]): Summary {
  const serverCores = (r: Row) =>
    Object.entries(r.cores)
      .filter(([k]) => !['loadgen', 'orchestrator', 'other'].includes(k))
      .reduce((s, [, v]) => s + v, 0);
  return {
    rps: median(rows.map((r) => r.rps)),
    p50: median(rows.map((r) => r.p50)),
    p95: median(rows.map((r) => r.p95)),
    p99: median(rows.map((r) => r.p99)),
    failures: rows.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0),
    noisyRounds: rows.filter((r) => r.noisy).length,
    serverCores: Math.round(median(rows.map(serverCores)) * 100) / 100,
    otherCores: Math.round(median(rows.map((r) => r.other)) * 100) / 100,
  };
}

// ---- the queries ------------------------------------------------------------------------------

/** A misspelling a person might type: the middle letter of the last name dropped. */
export function typo(name: string): string {
  const words = name.split(' ');
  const last = words.pop()!;
  const i = Math.floor(last.length / 2);
  return [...words, last.slice(0, i) + last.slice(i + 1)].join(' ');
}

/** Generated authors by rank (0 holds the most books), so the filters match from many books to a few. */
export const AUTHOR_RANKS = [0, 1, 3, 7, 15, 30, 60, 120];
export const FREE_TEXT = ['harbor', 'lantern', 'kyoto', 'cartographer', 'silent garden', 'emerald', 'petrov', 'winter'];

export interface Queries {
  /** author_filter queries that found something, with what they found */
  author: { path: string; author: string; typed: string; total: number }[];
  text: { path: string; q: string; total: number }[];
  listItems: number;
}

/** Checks every query once (200 and at least one result); queries that find nothing are left out. */
export async function prepareQueries(base: string, token: string, libraryItems: number): Promise<Queries> {
  const get = async (path: string) => {
    const r = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as { data: unknown[]; total?: number };
  };
  const list = await get('/api/media-items?limit=50');
  if (list.data.length !== Math.min(50, libraryItems)) console.log(`  note: the list page has ${list.data.length} items`);
  const author: Queries['author'] = [];
  for (const rank of AUTHOR_RANKS) {
    const name = authorName(rank);
    const typed = typo(name);
    const path = `/api/media-items/search?author_filter=${encodeURIComponent(typed)}&limit=50`;
    const total = (await get(path)).total ?? 0;
    if (total > 0) author.push({ path, author: name, typed, total });
  }
  const text: Queries['text'] = [];
  for (const q of FREE_TEXT) {
    const path = `/api/media-items/search?q=${encodeURIComponent(q)}&limit=50`;
    const total = (await get(path)).total ?? 0;
    if (total > 0) text.push({ path, q, total });
  }
  if (author.length === 0) throw new Error('no fuzzy author query found anything: is the generated library scanned?');
  if (text.length === 0) throw new Error('no free-text query found anything');
  console.log(`  author filters (typed → found): ${author.map((a) => `${a.typed} → ${a.total}`).join('; ')}`);
  console.log(`  free text (q → found): ${text.map((t) => `${t.q} → ${t.total}`).join('; ')}`);
  return { author, text, listItems: list.data.length };
}

// ---- one mode -------------------------------------------------------------------------------

export interface Target {
  url: string;
  token: string;
  roles: Roles;
  /** the same account's name and password (OPDS with HTTP Basic, KOReader sync) */
  login?: { username: string; password: string };
}

export interface ModeReads {
  queries: Queries;
  rows: Record<string, Row[]>;
  summary: Record<string, Summary>;
  /** profile rate ÷ the mean of the bare rates just before and after it, median over rounds */
  profileVsBare: number;
  profileVsBareRounds: number[];
}

/** The reads the growth to 100,000 items is measured on (issue 22), beside list and the two searches. */
export const MORE_KEYS = ['series', 'item', 'opds_page', 'opds_search', 'dashboard', 'kosync_pull', 'progress_write'] as const;
export const READ_KEYS = ['bare', 'profile', 'list', 'search_author', 'search_text', ...MORE_KEYS] as const;
/** What the growth measures at both sizes: every read but the bare route and the profile. */
export const GROWTH_KEYS = READ_KEYS.filter((k) => k !== 'bare' && k !== 'profile');

/** Series ranks like the authors': the first hold many books, the last few. */
export const SERIES_RANKS = [0, 1, 3, 7, 15, 30, 60, 120];
/** OPDS "recently added" pages taken in turn (all exist from 10,000 items on, at 50 a page) */
const OPDS_PAGES = [1, 2, 3, 5, 10, 20, 50, 100];

export interface MoreQueries {
  series: { path: string; series: string; total: number }[];
  items: string[];
  opdsPages: string[];
  opdsSearch: string[];
  basic: Record<string, string>;
  /** readers of their own (one per connection), each with a book: progress writes and KOReader pulls as many devices make them */
  readers: { token: string; item: string; kosync: Record<string, string>; document: string }[];
}

/** Each reader's KOReader pull of its document. */
export const pullRequests = (readers: MoreQueries['readers']) => readers.map((r) => ({ method: 'GET' as const, path: `/syncs/progress/${r.document}`, headers: r.kosync }));

/** Each reader's position write of its book, as the web app sends it. */
export const writeRequests = (readers: MoreQueries['readers']) =>
  readers.map((r) => ({
    method: 'PUT' as const,
    path: `/api/media-items/${r.item}/progress`,
    headers: { authorization: `Bearer ${r.token}`, 'content-type': 'application/json' },
    body: '{"percentage":0.5}',
  }));

/**
 * One reader per connection, as many people syncing look (one account's writes queue behind each
 * other): each registers, signs in over KOReader sync, writes a position of one of `books` and
 * pushes its KOReader document once, so a pull finds one.
 */
export async function registerReaders(
  url: string,
  password: string,
  books: { id: string; formats: { partial_md5?: string }[] }[],
  connections: number,
): Promise<MoreQueries['readers']> {
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const r = await fetch(url + path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body } : {}) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
    return text;
  };
  const key = createHash('md5').update(password).digest('hex');
  const readers: MoreQueries['readers'] = [];
  const stamp = Date.now().toString(36);
  for (let n = 0; n < Math.max(1, connections); n++) {
    const name = `reader${n}_${stamp}`;
    const r = await fetch(`${url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `${name}@example.com`, username: name, password }),
    });
    if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${await r.text()}`);
    const token = ((await r.json()) as { access_token: string }).access_token;
    const book = books[n % books.length]!;
    const kosync = { 'x-auth-user': name, 'x-auth-key': key, accept: 'application/vnd.koreader.v1+json' };
    const document = book.formats[0]!.partial_md5!;
    await call('GET', '/users/auth', kosync);
    await call('PUT', `/api/media-items/${book.id}/progress`, { authorization: `Bearer ${token}` }, '{"percentage":0.5}');
    await call(
      'PUT',
      '/syncs/progress',
      kosync,
      JSON.stringify({ document, progress: '/body/DocFragment[2].0', percentage: 0.25, device: 'Bench', device_id: `reader${String(n).padStart(26, '0')}` }),
    );
    readers.push({ token, item: book.id, kosync, document });
  }
  return readers;
}

/**
 * The requests of the other reads, each checked once: the series filters that find something, 8
 * items of the list page, one reader per connection (each with a book whose position it wrote and
 * whose KOReader document it pushed once, so a pull finds one), OPDS pages and searches with HTTP
 * Basic (as reader apps sign in).
 */
export async function prepareMore(t: Target, libraryItems: number, connections: number): Promise<MoreQueries> {
  if (!t.login) throw new Error('the other reads need the account name and password (Target.login)');
  const { username, password } = t.login;
  const bearer = { authorization: `Bearer ${t.token}` };
  const basic = { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
  const call = async (method: string, path: string, headers: Record<string, string>, body?: string) => {
    const r = await fetch(t.url + path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body } : {}) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
    return text;
  };
  const series: MoreQueries['series'] = [];
  for (const rank of SERIES_RANKS) {
    const name = seriesName(rank);
    const path = `/api/media-items/search?series_filter=${encodeURIComponent(typo(name))}&limit=50`;
    const total = (JSON.parse(await call('GET', path, bearer)) as { total?: number }).total ?? 0;
    if (total > 0) series.push({ path, series: name, total });
  }
  if (series.length === 0) throw new Error('no series filter found anything');
  const list = JSON.parse(await call('GET', '/api/media-items?limit=50', bearer)) as { data: { id: string; formats: { partial_md5?: string }[] }[] };
  const picked = list.data.filter((i) => i.formats[0]?.partial_md5).slice(0, 8);
  if (picked.length === 0) throw new Error('no item on the list page has a KOReader document hash');
  for (const i of picked) await call('GET', `/api/media-items/${i.id}`, bearer);
  const readers = await registerReaders(t.url, password, picked, connections);
  const opdsPages = OPDS_PAGES.filter((n) => (n - 1) * 50 < libraryItems).map((n) => `/opds/recent?page=${n}&per_page=50`);
  for (const p of opdsPages) if (!(await call('GET', p, basic)).includes('<entry>')) throw new Error(`OPDS ${p} has no entry`);
  const opdsSearch = FREE_TEXT.map((q) => `/opds/search?q=${encodeURIComponent(q)}&per_page=50`);
  await call('GET', opdsSearch[0]!, basic);
  await call('GET', '/api/dashboard/sections', bearer);
  console.log(`  series filters (typed → found): ${series.map((x) => `${typo(x.series)} → ${x.total}`).join('; ')}`);
  return {
    series,
    items: picked.map((i) => i.id),
    opdsPages,
    opdsSearch,
    basic,
    readers,
  };
}

export async function modeReads(
  gen: ReadGen,
  cfg: LoadCfg,
  t: Target,
  ref: { url: string; pid: number },
  libraryItems: number,
  only: readonly string[] = READ_KEYS,
): Promise<ModeReads> {
  const queries = await prepareQueries(t.url, t.token, libraryItems);
  const more = only.some((k) => (MORE_KEYS as readonly string[]).includes(k)) ? await prepareMore(t, libraryItems, cfg.connections) : null;
  const auth = { authorization: `Bearer ${t.token}` };
  const job = getJobs(cfg, auth);
  const refRoles: Roles = { pids: new Map([[ref.pid, 'ref']]), databases: [] };
  const rows: Record<string, Row[]> = {};
  const add = (k: string, r: Row) => (rows[k] ??= []).push(r);
  const ratios: number[] = [];
  for (let round = 0; round < cfg.rounds; round++) {
    if (cfg.rounds > 1) console.log(` round ${round + 1}/${cfg.rounds}`);
    if (only.includes('profile')) {
      const before = await measure(gen, cfg, refRoles, refJob(ref, cfg), 'bare fastify GET /ref');
      const profile = await measure(gen, cfg, t.roles, job(`${t.url}/api/auth/profile`), 'GET /api/auth/profile');
      const after = await measure(gen, cfg, refRoles, refJob(ref, cfg), 'bare fastify GET /ref (after)');
      add('bare', before);
      add('bare', after);
      add('profile', profile);
      ratios.push(profile.rps / ((before.rps + after.rps) / 2));
    }
    if (only.includes('list')) add('list', await measure(gen, cfg, t.roles, job(`${t.url}/api/media-items?limit=50`), 'GET /api/media-items?limit=50'));
    if (only.includes('search_author'))
      add(
        'search_author',
        await measure(
          gen,
          cfg,
          t.roles,
          job(
            t.url + queries.author[0]!.path,
            queries.author.map((a) => a.path),
          ),
          `search author_filter (${queries.author.length} typos)`,
        ),
      );
    if (only.includes('search_text'))
      add(
        'search_text',
        await measure(
          gen,
          cfg,
          t.roles,
          job(
            t.url + queries.text[0]!.path,
            queries.text.map((a) => a.path),
          ),
          `search q (${queries.text.length} terms)`,
        ),
      );
    if (more) {
      const m = more;
      const go = async (key: (typeof MORE_KEYS)[number], label: string, j: ReadJob) => {
        if (only.includes(key)) add(key, await measure(gen, cfg, t.roles, j, label));
      };
      const round = (paths: string[]) => ({ url: t.url + paths[0]!, paths });
      await go('series', `search series_filter (${m.series.length} typos)`, {
        ...job(
          t.url + m.series[0]!.path,
          m.series.map((x) => x.path),
        ),
      });
      await go(
        'item',
        `GET /api/media-items/<id> (${m.items.length})`,
        job(
          t.url,
          m.items.map((i) => `/api/media-items/${i}`),
        ),
      );
      await go('opds_page', `OPDS /opds/recent pages (${m.opdsPages.length})`, { ...getJobs(cfg, m.basic)(t.url), ...round(m.opdsPages) });
      await go('opds_search', `OPDS /opds/search (${m.opdsSearch.length} terms)`, { ...getJobs(cfg, m.basic)(t.url), ...round(m.opdsSearch) });
      await go('dashboard', 'GET /api/dashboard/sections', job(`${t.url}/api/dashboard/sections`));
      await go('kosync_pull', `KOReader GET /syncs/progress (${m.readers.length} readers)`, {
        ...job(t.url),
        perConnection: true,
        requests: pullRequests(m.readers),
      });
      await go('progress_write', `PUT /api/media-items/<id>/progress (${m.readers.length} readers)`, {
        ...job(t.url),
        method: 'PUT',
        perConnection: true,
        requests: writeRequests(m.readers),
      });
    }
  }
  const summary = Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, summarise(r)]));
  return { queries, rows, summary, profileVsBare: median(ratios), profileVsBareRounds: ratios.map((r) => Math.round(r * 1000) / 1000) };
}
