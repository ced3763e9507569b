// Once per vitest run, before any test file: the e2e harness starts Bindery the way `pnpm start`
// does, from the compiled bundle (embedded/dist), so build it when a source is newer; and make one
// empty embedded data directory (PGlite's first start costs seconds of CPU) that each embedded
// start copies instead of creating its own. Tests that need a first start pass their own DATA_DIR.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './bindery';

export default async function setup(): Promise<() => void> {
  if (process.env.BINDERY_TEST_ENTRY === 'source') return () => undefined;
  execFileSync(process.execPath, [join(ROOT, 'embedded/build.mjs'), '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
  process.env.BINDERY_TEST_ENTRY = 'dist';
  const template = mkdtempSync(join(tmpdir(), 'bindery-e2e-template-'));
  const child = spawn(process.execPath, [join(ROOT, 'embedded/dist/main.js')], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: template, PORT: '0', HOST: '127.0.0.1', OPS_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'test', SCAN_ON_STARTUP: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Bindery is running at/.test(out)) resolve();
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    void exited.then((code) => reject(new Error(`the embedded template start exited with ${code}:\n${out}`)));
  });
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`the embedded template start did not stop cleanly (${code}):\n${out}`);
  process.env.BINDERY_TEST_EMBEDDED_TEMPLATE = template;
  return () => rmSync(template, { recursive: true, force: true });
}
