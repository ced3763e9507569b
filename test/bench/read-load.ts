// The reads measured in each mode, with autocannon in its own process: the list page, search with
// a fuzzy author filter and with free text (each connection going round several queries), and the
// profile bracketed by the bare fastify route (bare, profile, bare) for the ratio.
import { authorName } from './gen-library';
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
}

export interface ModeReads {
  queries: Queries;
  rows: Record<string, Row[]>;
  summary: Record<string, Summary>;
  /** profile rate ÷ the mean of the bare rates just before and after it, median over rounds */
  profileVsBare: number;
  profileVsBareRounds: number[];
}

export const READ_KEYS = ['bare', 'profile', 'list', 'search_author', 'search_text'] as const;

export async function modeReads(
  gen: ReadGen,
  cfg: LoadCfg,
  t: Target,
  ref: { url: string; pid: number },
  libraryItems: number,
  only: readonly string[] = READ_KEYS,
): Promise<ModeReads> {
  const queries = await prepareQueries(t.url, t.token, libraryItems);
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
  }
  const summary = Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, summarise(r)]));
  return { queries, rows, summary, profileVsBare: median(ratios), profileVsBareRounds: ratios.map((r) => Math.round(r * 1000) / 1000) };
}
