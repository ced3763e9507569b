// Annotation colours: reader palette names (KOReader) and the web's hex swatches they stand for.
// The reading service maps names to hex on the way in; the gateway names a stored hex on the way out.

/** Palette name → the web's swatch; the first name of a swatch is the one given back to a device. */
export const PALETTE: Readonly<Record<string, string>> = {
  yellow: '#e0af68',
  red: '#f7768e',
  orange: '#ff9e64',
  green: '#9ece6a',
  olive: '#9ece6a',
  cyan: '#7dcfff',
  blue: '#7aa2f7',
  purple: '#bb9af7',
  gray: '#a9b1d6',
  grey: '#a9b1d6',
};

/** The swatch of a palette name, or undefined: only the table's own names (never `constructor`, `toString`, …). */
export const paletteHexOf = (name: string): string | undefined => (Object.hasOwn(PALETTE, name) ? PALETTE[name] : undefined);

const NAMES = new Map<string, string>();
for (const [name, hex] of Object.entries(PALETTE)) if (!NAMES.has(hex)) NAMES.set(hex, name);

/** A stored colour as a device names it: its palette name, or the hex when no name has it. */
export const paletteNameOf = (hex: string | null): string | null => (hex ? (NAMES.get(hex.toLowerCase()) ?? hex) : null);
