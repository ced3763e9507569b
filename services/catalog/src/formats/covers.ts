// Cover and thumbnail files for the web UI and OPDS, made with sharp from extracted cover bytes.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Sharp from 'sharp';
import { BookError } from './book-error';

// libvips is loaded with the first cover, not at start: ~17 MB an idle process does not need.
let loaded: Promise<typeof Sharp> | undefined;
const loadSharp = () =>
  (loaded ??= import('sharp').then(({ default: sharp }) => {
    // Every cover is decoded once: libvips' operation cache would only hold memory, growing with the library.
    sharp.cache(false);
    return sharp;
  }));

const COVER_MAX_SIDE = 1200;
const THUMB_WIDTH = 300;
/** Decompression-bomb guard: a 100-megapixel cover is already absurd. */
const MAX_INPUT_PIXELS = 100_000_000;
/** Covers travel base64-encoded in one bus reply (NATS' default max payload is 1 MiB). */
export const COVER_MAX_BYTES = 512 * 1024;

/** Writes `<dir>/<key>.jpg` (longest side at most 1200 px) and `<dir>/<key>-thumb.jpg` (300 px wide),
 * each atomically (temp file in `dir`, then rename). Returns the names relative to `dir`.
 * An image sharp cannot decode is a BookError; file-system failures are thrown as they are. */
export async function writeCovers(image: Buffer, dir: string, key: string): Promise<{ cover: string; thumbnail: string }> {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/u.test(key)) throw new TypeError(`unsafe cover key: ${JSON.stringify(key)}`);
  const [coverJpeg, thumbJpeg] = await render(image);
  await mkdir(dir, { recursive: true });
  const cover = `${key}.jpg`;
  const thumbnail = `${key}-thumb.jpg`;
  await writeAtomically(join(dir, cover), coverJpeg);
  await writeAtomically(join(dir, thumbnail), thumbJpeg);
  return { cover, thumbnail };
}

async function render(image: Buffer): Promise<[Buffer, Buffer]> {
  const sharp = await loadSharp();
  try {
    // EXIF orientation applied, transparency flattened onto white (JPEG has no alpha).
    const base = sharp(image, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS }).autoOrient().flatten({ background: '#ffffff' });
    const cover = (side: number, quality: number) => base.clone().resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true }).jpeg({ quality }).toBuffer();
    const [first, thumb] = await Promise.all([cover(COVER_MAX_SIDE, 82), base.clone().resize({ width: THUMB_WIDTH }).jpeg({ quality: 78 }).toBuffer()]);
    // a noisy or huge picture can stay large as JPEG: smaller and softer until it fits
    let out = first;
    for (const [side, quality] of [
      [1000, 72],
      [800, 65],
      [600, 60],
    ] as const) {
      if (out.length <= COVER_MAX_BYTES) break;
      out = await cover(side, quality);
    }
    return [out, thumb];
  } catch (e) {
    throw new BookError('unreadable cover image', { cause: e });
  }
}

async function writeAtomically(target: string, bytes: Buffer): Promise<void> {
  const temp = `${target}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temp, bytes);
    await rename(temp, target);
  } catch (e) {
    await unlink(temp).catch(() => {});
    throw e;
  }
}
