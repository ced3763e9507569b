// Whether a name or some bytes are an image (which archive entries are pages: page-order.ts).

export function isImageName(name: string): boolean {
  return /\.(jpe?g|png|gif|webp|avif|tiff?)$/iu.test(name);
}

export type ImageKind = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'tiff';

/** By magic bytes; null for anything we would not hand to the thumbnailer (SVG is left out on
 * purpose: it can reference other resources, and sharp's build here cannot decode BMP). */
export function sniffImage(b: Uint8Array): ImageKind | null {
  const ascii = (from: number, to: number): string => Buffer.from(b.subarray(from, to)).toString('latin1');
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 8 && ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return 'gif';
  if (b.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  if (b.length >= 12 && ascii(4, 8) === 'ftyp' && /^avi[fs]$/u.test(ascii(8, 12))) return 'avif';
  if (b.length >= 4 && (ascii(0, 4) === 'II*\0' || ascii(0, 4) === 'MM\0*')) return 'tiff';
  return null;
}
