// `pnpm bench:memory`: an empty embedded Bindery, first start and restart, for each way of running it.
// Prints time until /healthz answers (wall and CPU), RSS after 5 s idle and the peak (VmHWM).
//   node test/bench/embedded-memory.mjs [variant ...]    variants: compiled, compiled-128MB, tsx
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '../..');
/** `NAME=${NAME:-value}` in package.json's start script: the environment's value, else the script's default */
function startDefault(name) {
  const script = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
  const found = script.match(new RegExp(`\\b${name}=\\$\\{${name}:-([^}]*)\\}`));
  if (!found) throw new Error(`the start script sets no default for ${name}: ${script}`);
  return process.env[name] ?? found[1];
}
const VARIANTS = {
  // as `pnpm start` runs it (its start script's MALLOC_ARENA_MAX and heap cap, unless they are set)
  compiled: { args: ['embedded/dist/main.js'], env: { MALLOC_ARENA_MAX: startDefault('MALLOC_ARENA_MAX'), NODE_OPTIONS: startDefault('NODE_OPTIONS') } },
  'compiled-128MB': { args: ['embedded/dist/main.js'], env: { PGLITE_SHARED_BUFFERS: '128MB' } },
  tsx: { args: ['--import', 'tsx', 'embedded/src/main.ts'], env: {} },
};
const IDLE_MS = 5_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (pid, field) => Math.round(Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+)`))[1]) / 1024);
const cpuMs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Math.round(((Number(f[11]) + Number(f[12])) * 1000) / 100);
};

async function once(variant, dataDir, port) {
  const v = VARIANTS[variant];
  const t0 = performance.now();
  const child = spawn(process.execPath, v.args, {
    cwd: root,
    env: { ...process.env, ...v.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', SCAN_ON_STARTUP: 'false' },
    stdio: 'ignore',
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${variant} exited with ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await sleep(25);
  }
  const readyMs = Math.round(performance.now() - t0);
  const readyCpu = cpuMs(child.pid);
  await sleep(IDLE_MS);
  const out = { readyMs, readyCpuMs: readyCpu, idleRssMb: mb(child.pid, 'VmRSS'), peakRssMb: mb(child.pid, 'VmHWM') };
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return out;
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(VARIANTS);
spawnSync(process.execPath, ['embedded/build.mjs', '--if-stale'], { cwd: root, stdio: 'inherit' });
console.log(`load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} on ${(await import('node:os')).cpus().length} cores`);
console.log('variant          | start   | ready ms (cpu ms) | idle RSS MB | peak RSS MB');
for (const variant of wanted) {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-mem-'));
  try {
    for (const start of ['first', 'restart']) {
      const r = await once(variant, dir, 18_500 + Math.floor(Math.random() * 1000));
      console.log(
        `${variant.padEnd(16)} | ${start.padEnd(7)} | ${String(r.readyMs).padStart(8)} (${String(r.readyCpuMs).padStart(5)}) | ${String(r.idleRssMb).padStart(11)} | ${String(r.peakRssMb).padStart(11)}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
