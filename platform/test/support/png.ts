// PNG files written byte by byte for tests: a header that may claim any size, rows of black pixels
// deflated to almost nothing (pixel bombs that cost kilobytes on disk and gigabytes decoded).
import { constants, crc32, deflateSync } from 'node:zlib';

/** A PNG file from its header's size and colour type (8 bits a sample, no interlace) and its deflated rows. */
export function pngOf(width: number, height: number, colourType: 0 | 2, idat: Buffer): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = colourType; // 0 grey, 2 RGB
  return Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))]);
}

/** A grey PNG of black pixels whose header says `w` × `h` (`rows` of them present): ~260 KB for 16383², 268 megapixels decoded. */
export function blackPng(w: number, h: number, rows = h): Buffer {
  return pngOf(w, h, 0, deflateSync(Buffer.alloc((w + 1) * rows), { level: 9, strategy: constants.Z_RLE }));
}
