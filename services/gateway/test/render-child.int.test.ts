// The page render child (opds/render-child.ts) started from the TypeScript source, as in development:
// a pixel bomb is drawn at most MAX_SIDE a side, and a render over its memory or time limit ends
// the child alone, as a RenderLimitError.
import { constants, crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { RenderLimitError, renderPicture } from '../src/opds/render-child';
import { fitted, imageSize, pdfPixels, snapWidth } from '../src/opds/render-limits';

/** A greyscale PNG of `side`² black pixels: ~260 KB for 16383², 268 megapixels decoded. */
function blackPng(side: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const idat = deflateSync(Buffer.alloc((side + 1) * side), { level: 9, strategy: constants.Z_RLE });
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

describe('render limits', () => {
  it('snaps widths down to the sizes, the first one at least', () => {
    expect([null, 1, 159, 160, 700, 1079, 1080, 3999, 4000, 10_000].map(snapWidth)).toEqual([null, 160, 160, 160, 640, 960, 1080, 3200, 4000, 4000]);
  });
  it('fits pictures into the width and 4000 px without enlarging them', () => {
    expect(fitted(875, 1240, 4000)).toEqual({ width: 875, height: 1240 });
    expect(fitted(6000, 3000, null)).toEqual({ width: 4000, height: 2000 });
    expect(fitted(1000, 9000, 960)).toEqual({ width: 444, height: 4000 });
  });
  it('sizes PDF pages at 150 dpi or the width, at most 300 dpi and 4000 px', () => {
    expect(pdfPixels(612, 792, null)).toEqual({ width: 1275, height: 1650 });
    expect(pdfPixels(612, 792, 4000)).toEqual({ width: 2550, height: 3300 });
    expect(pdfPixels(9000, 9000, null)).toEqual({ width: 4000, height: 4000 });
    expect(pdfPixels(1, 9000, 4000)).toEqual({ width: 1, height: 4000 });
  });
  it('reads JPEG, PNG and GIF sizes from their headers', async () => {
    const img = sharp({ create: { width: 123, height: 45, channels: 3, background: '#888' } });
    expect(imageSize(await img.clone().jpeg().toBuffer(), 'image/jpeg')).toEqual({ width: 123, height: 45 });
    expect(imageSize(await img.clone().png().toBuffer(), 'image/png')).toEqual({ width: 123, height: 45 });
    expect(imageSize(await img.clone().gif().toBuffer(), 'image/gif')).toEqual({ width: 123, height: 45 });
    expect(imageSize(blackPng(16383).subarray(0, 33), 'image/png')).toEqual({ width: 16383, height: 16383 });
    expect(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg')).toBeNull();
  });
});

describe('the render child', () => {
  const bomb = blackPng(16383);
  it('draws a 16383² PNG at 4000 × 4000, or at the width asked', async () => {
    const out = await renderPicture(bomb, null, { memoryMb: 512, timeoutMs: 60_000 });
    expect(await sharp(out).metadata()).toMatchObject({ format: 'jpeg', width: 4000, height: 4000 });
    const narrow = await renderPicture(bomb, 480, { memoryMb: 512, timeoutMs: 60_000 });
    expect(await sharp(narrow).metadata()).toMatchObject({ width: 480, height: 480 });
  }, 60_000);
  it('ends a render over its memory limit: a RenderLimitError, and this process unharmed', async () => {
    const before = process.memoryUsage().rss;
    await expect(renderPicture(bomb, null, { memoryMb: 100, timeoutMs: 60_000 })).rejects.toBeInstanceOf(RenderLimitError);
    expect(process.memoryUsage().rss - before).toBeLessThan(50 * 1024 * 1024);
  }, 60_000);
  it('ends a render past its time limit', async () => {
    await expect(renderPicture(bomb, null, { memoryMb: 512, timeoutMs: 50 })).rejects.toThrow('picture over the render limits (time limit)');
  });
  it('says a file that is no picture is unreadable (not a limit)', async () => {
    const e = await renderPicture(Buffer.from('not a picture'), null, { memoryMb: 512, timeoutMs: 60_000 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect(e).not.toBeInstanceOf(RenderLimitError);
    expect((e as Error).message).toMatch(/^page picture unreadable: /u);
  }, 30_000);
});
