import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, expect, it } from 'vitest';
import { COVER_MAX_BYTES, writeCovers } from '../src/formats/covers';

const dir = mkdtempSync(join(tmpdir(), 'bindery-covers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('keeps even a noisy full-size cover small enough for one bus reply', async () => {
  const w = 2000,
    h = 3000;
  const noise = Buffer.alloc(w * h * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const png = await sharp(noise, { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toBuffer();
  const out = await writeCovers(png, dir, 'noise');
  const cover = readFileSync(join(dir, out.cover));
  expect(cover.length).toBeLessThanOrEqual(COVER_MAX_BYTES);
  const meta = await sharp(cover).metadata();
  expect(meta.format).toBe('jpeg');
  expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(1200);
  expect((await sharp(readFileSync(join(dir, out.thumbnail))).metadata()).width).toBe(300);
});
