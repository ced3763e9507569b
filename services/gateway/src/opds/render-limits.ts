// How large a streamed page may come out (docs/decisions.md, "Page rendering limits"): widths are
// snapped to a few sizes (each size is a render and a cache entry of its own), no side is longer than
// MAX_SIDE, a picture is never scaled up and a PDF page is never rendered above MAX_DPI.

/** the widths a page is made at; a requested width is taken down to the nearest (at least the first) */
export const WIDTHS: readonly number[] = [160, 240, 320, 480, 640, 800, 960, 1080, 1280, 1440, 1600, 1920, 2048, 2560, 3200, 4000];
/** no side of a page sent is longer: 4000 px is 16 megapixels, more than any reader's screen */
export const MAX_SIDE = 4000;
/** a PDF page without a width is drawn at this many pixels per inch */
export const PDF_DPI = 150;
/** and never above this, whatever the width asked */
export const MAX_DPI = 300;
/** decoding stops before a picture larger than this (sharp's own default: 16383 × 16383) */
export const MAX_INPUT_PIXELS = 16383 * 16383;
/** render-worker's exit code for a picture over MAX_INPUT_PIXELS */
export const TOO_LARGE_EXIT = 3;
/** the render child's exit when the input is no picture it can read (any other failure is a limit hit) */
export const UNREADABLE_EXIT = 4;

/** The width a page is made at for a requested one (null: none asked). */
export function snapWidth(w: number | null): number | null {
  if (w === null) return null;
  let out = WIDTHS[0]!;
  for (const s of WIDTHS) if (s <= w) out = s;
  return out;
}

/** The size of a `w` × `h` picture fitted into `width` (if any) and MAX_SIDE, never larger than it was. */
export function fitted(w: number, h: number, width: number | null): { width: number; height: number } {
  const scale = Math.min(1, (width ?? MAX_SIDE) / w, MAX_SIDE / w, MAX_SIDE / h);
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}

/** The pixel size of a PDF page of `w` × `h` points: PDF_DPI or `width`, at most MAX_DPI and MAX_SIDE. */
export function pdfPixels(w: number, h: number, width: number | null): { width: number; height: number } {
  const wanted = width === null ? PDF_DPI / 72 : width / w;
  const scale = Math.min(wanted, MAX_DPI / 72, MAX_SIDE / w, MAX_SIDE / h);
  return { width: Math.max(1, Math.floor(w * scale)), height: Math.max(1, Math.floor(h * scale)) };
}

/**
 * Width and height from the header of a JPEG, PNG or GIF (null when it does not say, or is another
 * type): whether a page can go out as it is is decided without decoding it.
 */
export function imageSize(b: Buffer, type: string): { width: number; height: number } | null {
  if (type === 'image/png') return b.length >= 24 && b.toString('latin1', 12, 16) === 'IHDR' ? { width: b.readUInt32BE(16), height: b.readUInt32BE(20) } : null;
  if (type === 'image/gif') return b.length >= 10 ? { width: b.readUInt16LE(6), height: b.readUInt16LE(8) } : null;
  if (type !== 'image/jpeg') return null;
  // the first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC) holds the size
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    const len = b.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
    if (marker === 0xda || len < 2) return null;
    i += 2 + len;
  }
  return null;
}
