// Contributor roles: MARC relator codes (EPUB's opf:role and marc:relators refines) and the
// spelled-out words some tools write instead, mapped to the catalog's lower-case role names.

const MARC: Record<string, string> = {
  aut: 'author',
  cre: 'author',
  edt: 'editor',
  trl: 'translator',
  ill: 'illustrator',
  art: 'illustrator',
  nrt: 'narrator',
  cov: 'cover_artist',
  clr: 'colorist',
  ink: 'inker',
  pnc: 'penciller',
  ltr: 'letterer',
  wrt: 'writer',
  ctb: 'contributor',
};

const WORDS: Record<string, string> = {
  author: 'author',
  writer: 'writer',
  editor: 'editor',
  translator: 'translator',
  illustrator: 'illustrator',
  artist: 'illustrator',
  narrator: 'narrator',
  penciller: 'penciller',
  penciler: 'penciller',
  inker: 'inker',
  colorist: 'colorist',
  colourist: 'colorist',
  letterer: 'letterer',
  'cover artist': 'cover_artist',
  cover_artist: 'cover_artist',
  coverartist: 'cover_artist',
  contributor: 'contributor',
};

/** Relator codes that credit a tool or a shop rather than a person (calibre writes itself as bkp). */
const NOT_PEOPLE = new Set(['bkp', 'mfr', 'pbl', 'prt']);

/** `whenMissing` when no role is given; null means "do not list this one"; unknown roles are contributors. */
export function roleOf(code: string | null | undefined, whenMissing: string): string | null {
  if (!code?.trim()) return whenMissing;
  const c = code.trim().toLowerCase();
  if (NOT_PEOPLE.has(c)) return null;
  return MARC[c] ?? WORDS[c] ?? 'contributor';
}
