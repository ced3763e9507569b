// The child process that decodes and scales one page picture (render-child.ts starts it under a
// memory and time limit): the picture on stdin, `{width, maxSide, maxPixels}` as its argument, the
// JPEG on stdout. A picture larger than maxPixels exits with TOO_LARGE before it is decoded; one it
// cannot read exits UNREADABLE with the reason on stderr; anything else (memory) exits 1. Nothing else is imported: it starts in ~0.1 s.
import sharp from 'sharp';
import { TOO_LARGE_EXIT, UNREADABLE_EXIT } from './render-limits';

interface Job {
  width: number | null;
  maxSide: number;
  maxPixels: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '{}') as Job;
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  // one thread and no operation cache: this process renders one picture and ends
  sharp.concurrency(1);
  sharp.cache(false);
  const img = sharp(Buffer.concat(chunks), { failOn: 'none', limitInputPixels: job.maxPixels });
  const out = await img
    .rotate()
    .resize({ width: Math.min(job.width ?? job.maxSide, job.maxSide), height: job.maxSide, fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 85, mozjpeg: false })
    .toBuffer();
  await new Promise<void>((done, fail) => process.stdout.write(out, (e) => (e ? fail(e) : done())));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(message);
    // the picture's own fault (no picture, a broken one) says so; running out of room is a limit
    process.exit(/pixel limit/iu.test(message) ? TOO_LARGE_EXIT : /memory|alloc/iu.test(message) ? 1 : UNREADABLE_EXIT);
  },
);
