// The scanner's per-file stages alone, in this process and with no database: hashFile, extract
// (per format) and the cover files, each over the whole corpus with the scanner's concurrency. What
// they cost in CPU, against what the catalog spent, says how much of a scan is file work and how
// much is the database and the events.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract, hashFile, writeCovers, type Extracted } from '../../services/catalog/src/formats/index';
import type { FoundFile } from '../../services/catalog/src/scanner/crawl';
import { CLK_TCK, selfTimes } from './scan-hash';

export interface StageCost {
  stage: string;
  files: number;
  wallSeconds: number;
  /** CPU seconds of this process: the main thread, every other thread (libuv pool, libvips, GC helpers), and waited-for child processes (pdftoppm) */
  cpu: { main: number; threads: number; children: number };
  /** (main + threads + children) per file, ms */
  msPerFile: number;
}

function mainTicks(): number {
  const s = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

async function stage(name: string, items: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<StageCost> {
  const u0 = process.cpuUsage();
  const m0 = mainTicks();
  const c0 = selfTimes().children;
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, items)) }, async () => {
      while (next < items) await fn(next++);
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const u = process.cpuUsage(u0);
  const total = (u.user + u.system) / 1e6;
  const main = (mainTicks() - m0) / CLK_TCK;
  const children = selfTimes().children - c0;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    stage: name,
    files: items,
    wallSeconds: r2(wall),
    cpu: { main: r2(main), threads: r2(Math.max(0, total - main)), children: r2(children) },
    msPerFile: items === 0 ? 0 : Math.round(((total + children) / items) * 1e4) / 10,
  };
}

/**
 * hashFile and extract as the scan calls them (no PDF page render), then what the background cover
 * worker does for each book with a cover: extract again (rendering PDF page 1) and writeCovers.
 */
export async function stageCosts(files: FoundFile[], coverDir: string, concurrency: number): Promise<StageCost[]> {
  const out: StageCost[] = [];
  out.push(await stage('hashFile', files.length, concurrency, async (i) => void (await hashFile(files[i]!.abs))));
  const withCover: FoundFile[] = [];
  const formats = [...new Set(files.map((f) => f.format))].sort();
  for (const format of formats) {
    const mine = files.filter((f) => f.format === format);
    out.push(
      await stage(`extract ${format}`, mine.length, concurrency, async (i) => {
        let x: Extracted;
        try {
          x = await extract(mine[i]!.abs, format, { renderPdfCover: false });
        } catch {
          return; // the corrupt files: the scanner records them as issues
        }
        if (x.cover || x.coverLater) withCover.push(mine[i]!);
      }),
    );
  }
  out.push(
    await stage('covers: extract again + writeCovers', withCover.length, concurrency, async (i) => {
      const f = withCover[i]!;
      try {
        const x = await extract(f.abs, f.format, { renderPdfCover: true });
        if (x.cover) await writeCovers(x.cover, join(coverDir, String(i % 256)), `c${i}`);
      } catch {
        /* a picture sharp cannot read: the book keeps no cover */
      }
    }),
  );
  return out;
}
