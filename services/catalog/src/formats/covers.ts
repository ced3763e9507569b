// Cover and thumbnail files for the web UI and OPDS, made with sharp from extracted cover bytes.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { BookError } from './book-error';

const COVER_MAX_SIDE = 1200;
const THUMB_WIDTH = 300;
/** Decompression-bomb guard: a 100-megapixel cover is already absurd. */
const MAX_INPUT_PIXELS = 100_000_000;

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
  try {
    // EXIF orientation applied, transparency flattened onto white (JPEG has no alpha).
    const base = sharp(image, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS }).autoOrient().flatten({ background: '#ffffff' });
    return await Promise.all([
      base.clone().resize({ width: COVER_MAX_SIDE, height: COVER_MAX_SIDE, fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 82 }).toBuffer(),
      base.clone().resize({ width: THUMB_WIDTH }).jpeg({ quality: 78 }).toBuffer(),
    ]);
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
