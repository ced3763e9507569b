// The production image's build stage, step by step, without a container engine (none runs on these
// machines): the Dockerfile's own COPY and RUN instructions replayed in a temporary folder with the
// build context filtered by .dockerignore, so a manifest the dependency layer forgets, or a file the
// context leaves out, fails here as it would fail `docker build`. Installs come from the local pnpm
// store (`--offline`). The run stage's `COPY --from=build` sources must exist afterwards.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/bindery';
import { dockerignore, parseDockerfile, replayStage, stages } from '../support/dockerfile';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const steps = stages(parseDockerfile(dockerfile));
const SERVICES = readdirSync(join(ROOT, 'services')).filter((d) => existsSync(join(ROOT, 'services', d, 'package.json')));

describe('.dockerignore as Docker reads it', () => {
  it('the last matching line decides, `**` spans folders, a parent folder counts (the documentation examples)', () => {
    const secret = dockerignore('*.md\n!README*.md\nREADME-secret.md');
    expect(['README.md', 'README-secret.md', 'CHANGES.md', 'docs/a.md'].map(secret)).toEqual([false, true, true, false]);
    const later = dockerignore('*.md\nREADME-secret.md\n!README*.md');
    expect(later('README-secret.md')).toBe(false);
    const deep = dockerignore('**/*.go\n**/node_modules\ntemp?');
    expect(['a.go', 'x/y/b.go', 'p/node_modules/q/index.js', 'tempa', 'x/tempa', 'temp'].map(deep)).toEqual([true, true, true, true, false, false]);
  });
});

describe('the Dockerfile', () => {
  it('has a build stage and a run stage', () => {
    expect(steps.has('build')).toBe(true);
    expect(steps.size).toBe(2);
  });

  it('its header names every service a distributed process can run', () => {
    const header = dockerfile.split('\n').filter((l) => l.startsWith('#'));
    const named = header.join('\n').match(/BINDERY_SERVICES=(\S+)/u)?.[1];
    expect(named?.split('|').sort()).toEqual([...SERVICES].sort());
  });

  it('copies every workspace manifest into the dependency layer before installing', () => {
    const build = steps.get('build')!;
    const install = build.findIndex((s) => s.op === 'RUN' && /pnpm install/u.test(s.args));
    const before = build.slice(0, install).filter((s) => s.op === 'COPY');
    const copied = before.flatMap((s) => s.args.split(/\s+/u).slice(0, -1));
    for (const s of SERVICES) expect(copied, `services/${s}/package.json`).toContain(`services/${s}/package.json`);
  });
});

describe('the image build stage, replayed without a container engine', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'bindery-image-build-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('installs, bundles and deploys the app: dist/main.js and dist/service.js with their production dependencies', () => {
    const pnpmVersion = spawnSync('pnpm', ['--version'], { encoding: 'utf8' }).stdout.trim();
    const replay = replayStage(steps.get('build')!, {
      context: ROOT,
      root: tmp,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CI: 'true' },
      skipRun: (cmd) => {
        const want = cmd.match(/^npm install -g pnpm@(\S+)$/u)?.[1];
        if (!want) return null;
        // the host's pnpm stands in for the one the image installs: it must be that version
        expect(pnpmVersion).toBe(want);
        return `pnpm ${pnpmVersion} is on this host`;
      },
      // no registry here: everything comes from the local store, which `pnpm install` filled
      rewriteRun: (cmd) => cmd.replace(/\bpnpm install\b/gu, 'pnpm install --offline').replace(/\bdeploy\b/gu, 'deploy --prefer-offline'),
      timeoutMs: 400_000,
    });
    const app = replay.at('/app');
    expect(readdirSync(join(app, 'dist'))).toEqual(expect.arrayContaining(['main.js', 'service.js', 'render-worker.js']));
    expect(existsSync(join(app, 'node_modules/fastify/package.json'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/sharp/package.json'))).toBe(true);
    // the run stage copies these out of the build stage
    for (const s of steps.get('1') ?? [...steps.values()][1]!) {
      if (s.op !== 'COPY' || !s.args.startsWith('--from=build')) continue;
      const src = s.args.split(/\s+/u)[1]!;
      expect(existsSync(replay.at(src)), `COPY ${s.args}`).toBe(true);
    }
    // the bundle loads with the deployed dependencies alone, and refuses a distributed start without its URLs
    const r = spawnSync(process.execPath, ['dist/service.js'], { cwd: app, env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 60_000 });
    expect([r.status, r.stderr.trim().split('\n').at(-1)]).toEqual([1, 'invalid configuration: DATABASE_URL and NATS_URL are required for a distributed service']);
    // the page render child runs from the deployed app too (sharp from its node_modules): a 1×1 PNG in, a JPEG out
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==', 'base64');
    const job = JSON.stringify({ width: 160, maxSide: 4000, maxPixels: 1_000_000 });
    const w = spawnSync(process.execPath, ['dist/render-worker.js', job], { cwd: app, env: { PATH: process.env.PATH }, input: png, timeout: 60_000 });
    expect([w.status, w.stderr.toString(), w.stdout.subarray(0, 3).toString('hex')]).toEqual([0, '', 'ffd8ff']);
  }, 600_000);
});
