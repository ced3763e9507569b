// What the calibre tests share: whether Debian's calibredb is here (the reason to skip when not),
// and the corpus books they add to a calibre library.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { FIXTURE } from './catalog-helpers';

export const calibredbMissing = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v calibredb'], { encoding: 'utf8' });
    return null;
  } catch {
    return 'calibredb is not installed (apt-get install calibre)';
  }
})();

export const EPUB = join(FIXTURE, 'Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.epub');
export const EPUB2 = join(FIXTURE, 'Erik Lindgren/The Long Winter Cycle/02 - A Garden in Winter.epub');
export const CBZ = join(FIXTURE, 'comics/Himmelsverlag/Die Wolkenpiraten/Die Wolkenpiraten 001 (2009).cbz');
