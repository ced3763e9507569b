// What the image runs: the compiled output and production dependencies only (as the Dockerfile's
// `pnpm deploy` stage copies them), in a clean directory of its own, as an unprivileged user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../support/bindery';
import { client } from '../support/http';

const NOBODY = 65534;
const PLUGIN = 'clients/koreader/bindery.koplugin';
const isRoot = process.getuid?.() === 0;

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout + r.stderr;
}

function walk(dir: string, found: string[] = []): string[] {
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) walk(join(dir, d.name), found);
    else found.push(join(dir, d.name));
  }
  return found;
}

describe.skipIf(!isRoot)('the production output in a clean directory, as uid 65534 (needs root to switch user)', () => {
  let tmp: string;
  let app: string;
  let child: ChildProcess | undefined;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'bindery-image-'));
    chmodSync(tmp, 0o755);
    app = join(tmp, 'app');
    // what the run's global setup built is current: built again in place, its chunks would vanish
    // under the files running beside this one (two at once, decision 94)
    run(process.execPath, ['embedded/build.mjs', '--if-stale']);
    // the Dockerfile's build stage does the same: production dependencies of the app package, and its dist
    run('pnpm', ['--filter', '@bindery/embedded', 'deploy', '--prod', '--legacy', '--prefer-offline', app]);
    // and its run stage copies the KOReader plugin next to dist/
    cpSync(join(ROOT, PLUGIN), join(app, PLUGIN), { recursive: true });
  }, 240_000);
  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('holds compiled JavaScript and production dependencies only: no TypeScript, no loader, no tests', () => {
    const files = walk(app).map((f) => f.slice(app.length + 1));
    // with the template data directory a first start unpacks instead of running initdb
    expect(files.filter((f) => f.startsWith('dist/')).sort()).toEqual(expect.arrayContaining(['dist/main.js', 'dist/service.js', 'dist/pgdata.tar.gz']));
    expect(files.filter((f) => !f.startsWith('node_modules/') && /\.ts$/.test(f))).toEqual([]);
    expect(files.filter((f) => !f.startsWith('node_modules/') && !f.startsWith('dist/') && !f.startsWith(`${PLUGIN}/`))).toEqual(['package.json']);
    const installed = readdirSync(join(app, 'node_modules/.pnpm'));
    for (const dev of ['tsx@', 'esbuild@', 'typescript@', 'vitest@', '@bindery+']) expect(installed.filter((p) => p.startsWith(dev))).toEqual([]);
    expect(existsSync(join(app, 'node_modules/fastify/package.json'))).toBe(true);
  });

  it('starts as uid 65534 with only DATA_DIR writable, answers /healthz and registers the first account', async () => {
    const data = join(tmp, 'data');
    mkdirSync(data);
    chownSync(data, NOBODY, NOBODY);
    child = spawn(process.execPath, ['dist/main.js'], {
      cwd: app,
      uid: NOBODY,
      gid: NOBODY,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'production', DATA_DIR: data, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', OPS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
      child!.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = out.match(/Bindery is running at (http:\/\/\S+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child!.once('exit', (code) => reject(new Error(`exited with ${code}:\n${out}`)));
    });
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    expect(status).toMatch(new RegExp(`^Uid:\\s+${NOBODY}\\s`, 'm'));

    const http = client(url);
    const health = await http('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const r = await http('POST', '/api/auth/register', { body: { email: 'image@example.com', username: 'image-admin', password: 'passw0rd-image' } });
    expect(r.status).toBe(201);
    expect(r.json.user.role).toBe('admin');
    expect((await http('GET', '/api/auth/profile', { token: r.json.access_token })).json.username).toBe('image-admin');
    // it wrote its database and token secret under DATA_DIR, and nothing into its own directory
    expect(readdirSync(data).sort()).toEqual(expect.arrayContaining(['db', 'jwt-secret']));
    expect(readdirSync(app).sort()).toEqual(['clients', 'dist', 'node_modules', 'package.json']);
    // the plugin folder is found next to dist/ and served as a zip
    const zip = await http('GET', '/api/koreader/plugin');
    expect([zip.status, zip.headers.get('content-type'), zip.headers.get('content-disposition')]).toEqual([200, 'application/zip', 'attachment; filename="bindery.koplugin.zip"']);
    for (const f of readdirSync(join(app, PLUGIN))) expect(zip.bytes.includes(`bindery.koplugin/${f}`), f).toBe(true);
  }, 90_000);

  it('the distributed entry point refuses to start without DATABASE_URL and NATS_URL, naming them', () => {
    const r = spawnSync(process.execPath, ['dist/service.js'], { cwd: app, uid: NOBODY, gid: NOBODY, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('invalid configuration: DATABASE_URL and NATS_URL are required for a distributed service');
  });
});
