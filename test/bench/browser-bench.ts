// What the browser benchmarks (bench:web, bench:reader) share: they run the compiled bundle as
// `pnpm start` does, need Debian's Chromium, give up after a deadline and say the machine's load
// before and after; and they weigh a page's own assets as a compressing server or proxy would send them.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { CHROMIUM } from '../e2e/web-browser';
import { ROOT } from '../support/bindery';
import { fmt, runWithDeadline } from './lib';

/** Builds embedded/dist, then runs `main` within `minutes`; the load average is printed after it. */
export async function runBrowserBench(name: string, minutes: number, main: () => Promise<void>): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'embedded/build.mjs')], { stdio: 'inherit' });
  process.env.BINDERY_TEST_ENTRY = 'dist';
  await runWithDeadline(name, minutes * 60_000, async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is absent: apt-get install -y chromium`);
    const before = loadavg()[0] ?? 0;
    await main();
    console.log(`load average 1 min: ${fmt(before, 2)} before, ${fmt(loadavg()[0] ?? 0, 2)} after`);
  });
}

/** The bytes of a page's own files (`paths` on the server at `url`): raw, gzip (level 9) and brotli. */
export async function assetSizes(url: string, paths: string[]): Promise<{ raw: number; gzip: number; brotli: number }> {
  const out = { raw: 0, gzip: 0, brotli: 0 };
  for (const p of paths) {
    const body = Buffer.from(await (await fetch(`${url}${p}`)).arrayBuffer());
    out.raw += body.length;
    out.gzip += gzipSync(body, { level: 9 }).length;
    out.brotli += brotliCompressSync(body).length;
  }
  return out;
}
