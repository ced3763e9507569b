// Reading OPDS documents in tests, and running the third-party checkers of ../shared/peers on
// them: the RELAX NG validator (validate-opds.sh) and the two client parsers (opds-client-check.mjs).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/bindery';

// fast-xml-parser is the catalog's dependency; resolved from there rather than added to the root
type Parser = { parse(xml: string): Record<string, any> };
const { XMLParser } = createRequire(join(ROOT, 'services/catalog/package.json'))('fast-xml-parser') as { XMLParser: new (o: Record<string, unknown>) => Parser };

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: false,
  textNodeName: '#text',
  isArray: (name: string) => ['entry', 'link', 'author', 'category', 'Url'].includes(name),
  parseTagValue: false,
});

export interface Link {
  rel: string;
  href: string;
  type: string;
  length?: string;
  title?: string;
}

export interface Entry {
  id: string;
  title: string;
  updated: string;
  authors: string[];
  links: Link[];
  categories: string[];
  summary?: string;
  content?: string;
}

export interface Feed {
  id: string;
  title: string;
  links: Link[];
  entries: Entry[];
  total?: number;
  perPage?: number;
  startIndex?: number;
}

const text = (v: unknown): string => (v === undefined ? '' : typeof v === 'object' && v !== null ? String((v as Record<string, unknown>)['#text'] ?? '') : String(v));

export function parseFeed(xml: string): Feed {
  const doc = parser.parse(xml);
  const f = doc.feed;
  if (!f) throw new Error(`not an Atom feed: ${xml.slice(0, 200)}`);
  const num = (k: string) => (f[k] === undefined ? undefined : Number(text(f[k])));
  return {
    id: text(f.id),
    title: text(f.title),
    links: (f.link ?? []) as Link[],
    entries: ((f.entry ?? []) as Record<string, any>[]).map((e) => ({
      id: text(e.id),
      title: text(e.title),
      updated: text(e.updated),
      authors: ((e.author ?? []) as Record<string, unknown>[]).map((a) => text(a.name)),
      links: (e.link ?? []) as Link[],
      categories: ((e.category ?? []) as Record<string, string>[]).map((c) => c.term!),
      summary: e.summary === undefined ? undefined : text(e.summary),
      content: e.content === undefined ? undefined : text(e.content),
    })),
    total: num('opensearch:totalResults'),
    perPage: num('opensearch:itemsPerPage'),
    startIndex: num('opensearch:startIndex'),
  };
}

export function parseXml(xml: string): Record<string, any> {
  return parser.parse(xml);
}

export const linkOf = (links: Link[], rel: string) => links.find((l) => l.rel === rel);

export const basic = (login: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` });

const run = promisify(execFile);
const PEERS = join(ROOT, '../shared/peers');
const VALIDATOR = join(PEERS, 'validate-opds.sh');
const CLIENTS = join(PEERS, 'opds-client-check.mjs');
/** a copy of ../shared/peers' package files, installed by the tests when no other copy is there */
const LOCAL_PEERS = join(ROOT, 'test/.tmp/peers');
const hasParsers = (dir: string) => existsSync(join(dir, 'r2-opds-js')) && existsSync(join(dir, 'opds-feed-parser'));
/** node_modules of the OPDS client parsers: BINDERY_PEERS_NODE_MODULES, ../shared/peers, or the tests' own copy */
function peerModulesDir(): string {
  if (process.env.BINDERY_PEERS_NODE_MODULES) return process.env.BINDERY_PEERS_NODE_MODULES;
  const shared = join(PEERS, 'node_modules');
  return hasParsers(shared) ? shared : join(LOCAL_PEERS, 'node_modules');
}
let peerModules = peerModulesDir();

/** Why the RELAX NG check can't run here, or null when it can. */
export async function validatorMissing(): Promise<string | null> {
  if (!existsSync(VALIDATOR)) return `${VALIDATOR} is absent`;
  for (const tool of ['jing', 'xmllint', 'curl']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`]);
    } catch {
      return `${tool} is not installed (apt-get install jing libxml2-utils curl)`;
    }
  }
  return null;
}

let installing: Promise<string | null> | undefined;
/**
 * Why the client parsers can't run here, or null when they can. When no copy is installed, the
 * exact versions of ../shared/peers/package-lock.json are installed into test/.tmp/peers
 * (`npm ci --ignore-scripts`, once; it needs the npm registry).
 */
export function clientsMissing(): Promise<string | null> {
  installing ??= (async () => {
    if (!existsSync(CLIENTS)) return `${CLIENTS} is absent`;
    if (hasParsers(peerModules)) return null;
    if (process.env.BINDERY_PEERS_NODE_MODULES) return `BINDERY_PEERS_NODE_MODULES (${peerModules}) holds no r2-opds-js and opds-feed-parser`;
    // installed beside it, then moved into place in one rename: two files running at once may both
    // install, and the second rename finds the first one's copy there (and uses it)
    const mine = `${LOCAL_PEERS}-${process.pid}`;
    try {
      rmSync(mine, { recursive: true, force: true });
      mkdirSync(mine, { recursive: true });
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(PEERS, f), join(mine, f));
      await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: mine, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
      try {
        renameSync(mine, LOCAL_PEERS);
      } catch {
        // there already: another file's complete copy, or an unfinished one a stopped run left
        if (!hasParsers(join(LOCAL_PEERS, 'node_modules'))) {
          rmSync(LOCAL_PEERS, { recursive: true, force: true });
          renameSync(mine, LOCAL_PEERS);
        }
      }
    } catch (e) {
      if (!hasParsers(join(LOCAL_PEERS, 'node_modules')))
        return `the OPDS client parsers could not be installed into test/.tmp/peers (npm ci --ignore-scripts): ${(e as Error).message.split('\n', 1)[0]}`;
    } finally {
      rmSync(mine, { recursive: true, force: true });
    }
    peerModules = join(LOCAL_PEERS, 'node_modules');
    return hasParsers(peerModules) ? null : 'npm ci in test/.tmp/peers did not install r2-opds-js and opds-feed-parser';
  })();
  return installing;
}

export interface PeerRun {
  code: number;
  out: string;
}

async function runPeer(cmd: string, args: string[], env: Record<string, string>): Promise<PeerRun> {
  try {
    const r = await run(cmd, args, { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 4 * 1024 * 1024 });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` };
  }
}

/** validate-opds.sh on a live URL with HTTP Basic credentials (it follows the feed's search link). */
export const validateOpds = (url: string, auth: string) => runPeer(VALIDATOR, [url], { CURL_AUTH: auth });

/** opds-client-check.mjs on a live URL: Readium's and NYPL's parsers. */
export const clientCheck = (url: string, auth: string) => runPeer(process.execPath, [CLIENTS, url, '--json'], { CURL_AUTH: auth, NODE_PATH: peerModules });
