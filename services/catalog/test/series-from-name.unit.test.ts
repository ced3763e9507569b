// Series from folder and file names: the layouts comic and book collections use, and the names
// that must not be taken for a series (plain titles with numbers, years, author folders).
import { describe, expect, it } from 'vitest';
import { seriesFromPath, type NamedSeries } from '../src/domain/series-from-name';

const s = (series: string, index: number | null, extra: Partial<NamedSeries> = {}): NamedSeries => ({ series, index, volume: null, title: null, year: null, ...extra });

describe('seriesFromPath: a series', () => {
  const cases: [string, NamedSeries][] = [
    // a numbered file in a series folder
    ['Inspector Lumière/07 - Une Clé perdue.epub', s('Inspector Lumière', 7, { title: 'Une Clé perdue' })],
    ['Amélie Fournier/Inspector Lumière/01 - Une Clé perdue.mobi', s('Inspector Lumière', 1, { title: 'Une Clé perdue' })],
    ['Ursula K. Lindqvist/Chronicles of the Salt Road/00 - Beneath the Paper Station.azw3', s('Chronicles of the Salt Road', 0, { title: 'Beneath the Paper Station' })],
    ['Author/The Expanse/01 Leviathan Wakes.epub', s('The Expanse', 1, { title: 'Leviathan Wakes' })],
    ['Discworld/1. The Colour of Magic.epub', s('Discworld', 1, { title: 'The Colour of Magic' })],
    ['Discworld/02_The_Light_Fantastic.mobi', s('Discworld', 2, { title: 'The Light Fantastic' })],
    ['Saga/003.cbz', s('Saga', 3)],
    ['Saga (2012)/004.cbz', s('Saga', 4)],
    ['One Piece/Vol. 12.pdf', s('One Piece', 12, { title: null })],
    ['One Piece/Chapter 1044 - Warrior of Liberation.cbz', s('One Piece', 1044, { title: 'Warrior of Liberation' })],
    ['Dune Chronicles/Book 2 - Dune Messiah.epub', s('Dune Chronicles', 2, { title: 'Dune Messiah' })],
    ['田中 春樹/星の図書館/01 - 川の物語.epub', s('星の図書館', 1, { title: '川の物語' })],
    ['Wheel of Time/4.5 - New Spring.epub', s('Wheel of Time', 4.5, { title: 'New Spring' })],
    // series and number in the file name
    ['comics/Owlhouse Press/The Midnight Agency/The Midnight Agency 003 (2018).cbz', s('The Midnight Agency', 3, { year: 2018 })],
    ['Captain Nebula 001 (2015).cbz', s('Captain Nebula', 1, { year: 2015 })],
    ['Captain Nebula 002.cbz', s('Captain Nebula', 2)],
    ['Die Wolkenpiraten 001 (2009) (Digital) (Zone-Empire).cbz', s('Die Wolkenpiraten', 1, { year: 2009 })],
    ['The Midnight Agency v1 #3.cbz', s('The Midnight Agency', 3, { volume: 1 })],
    ['Saga v01 006.cbz', s('Saga', 6, { volume: 1 })],
    ['Saga Vol. 2 #12.cbz', s('Saga', 12, { volume: 2 })],
    ['Saga - 012.cbz', s('Saga', 12)],
    ['Saga #12.cbz', s('Saga', 12)],
    ['Saga #1.5.cbz', s('Saga', 1.5)],
    ['Batman #1 (of 6) (2011).cbr', s('Batman', 1, { year: 2011 })],
    ['100 Bullets 001.cbz', s('100 Bullets', 1)],
    ['Saga Vol. 2.pdf', s('Saga', 2, { volume: 2 })],
    ['Saga Volume 3.pdf', s('Saga', 3, { volume: 3 })],
    ['Astérix Tome 7.cbz', s('Astérix', 7, { volume: 7 })],
    ['Kaiju Café - Chapter 001.cbz', s('Kaiju Café', 1)],
    ['ねこの探偵 - Chapter 004.cbz', s('ねこの探偵', 4)],
    ['Berserk Chapter 12.cbz', s('Berserk', 12)],
    ['[Scanlator] Berserk - 012 [HQ].cbz', s('Berserk', 12)],
    ['Saga 003 - The Next Chapter.cbz', s('Saga', 3, { title: 'The Next Chapter' })],
    ['Saga Vol. 2 - Homecoming.pdf', s('Saga', 2, { volume: 2, title: 'Homecoming' })],
    ['Sandman_001_(1989).cbz', s('Sandman', 1, { year: 1989 })],
    ['Series/Series 003.cbz', s('Series', 3)],
    ['inbox/Copy of The Midnight Agency v1 #1.cbz', s('The Midnight Agency', 1, { volume: 1 })],
    ['Saga 004 - Copy.cbz', s('Saga', 4)],
    ['Saga 005 (1).cbz', s('Saga', 5)],
  ];
  for (const [path, want] of cases) it(path, () => expect(seriesFromPath(path)).toEqual(want));
});

describe('seriesFromPath: no series', () => {
  const none = [
    '1984.epub',
    'Fahrenheit 451.mobi',
    'Catch 22.epub',
    'Catch-22.pdf',
    '2001 A Space Odyssey.epub',
    'Orwell/1984.epub',
    'inbox/1984 Revisited - Zoë Kravitz-Hale.epub',
    'Slaughterhouse-Five.azw3',
    'The Hidden Crown (1864).epub',
    'Why_ (2007).epub',
    'Moby Dick - Herman Melville.mobi',
    'Amélie Fournier/Inspector Lumière/Broken - Unfinished Manuscript.epub',
    'C++ & You_ 50% Off.epub',
    'Apollo 13 (1995).pdf',
    'Report - 2011.pdf',
    'Annual Report 2019.pdf',
    'The Jungle Book 2.pdf',
    'corrupt/bad-comicinfo.cbz',
    'Straße der Ölmühle.azw3',
    // a leading number needs a folder that names a series
    '07 - Title.epub',
    'inbox/01 - Something.epub',
    'duplicates/01 - Une Clé perdue.epub',
    'comics/001.cbz',
    'unsorted/Aleksandr_Petrov_Golden_Crowns.epub',
    '',
    '.epub',
    '(2011).cbz',
  ];
  for (const path of none) it(JSON.stringify(path), () => expect(seriesFromPath(path)).toBeNull());

  it("an author's own folder is not a series", () => {
    expect(seriesFromPath('Stephen King/01 - Carrie.epub', ['Stephen King'])).toBeNull();
    expect(seriesFromPath('Hartley, J. R./01 - Naïve Café.epub', ['J. R. Hartley'])).toBeNull();
    expect(seriesFromPath('Stephen King/01 - Carrie.epub', ['Someone Else'])).toEqual(s('Stephen King', 1, { title: 'Carrie' }));
  });
});
