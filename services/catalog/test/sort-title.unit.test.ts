// How a title sorts: the leading article of the book's language dropped (any language's when the
// book names none or one without a list), elided articles too, case folded, accents kept.
import { describe, expect, it } from 'vitest';
import { sortTitle } from '../src/domain/normalize';

describe('sortTitle', () => {
  it("drops the leading article of the book's language", () => {
    expect(sortTitle('The Hobbit', 'en')).toBe('hobbit');
    expect(sortTitle('An Unexpected Party', 'en-GB')).toBe('unexpected party');
    expect(sortTitle('Der Zauberberg', 'de')).toBe('zauberberg');
    expect(sortTitle('Les Misérables', 'fr')).toBe('misérables');
    expect(sortTitle('La Sombra del Viento', 'es')).toBe('sombra del viento');
    expect(sortTitle('Il nome della rosa', 'it')).toBe('nome della rosa');
  });

  it("keeps another language's article as a word of the title", () => {
    expect(sortTitle('Die Hard', 'en')).toBe('die hard');
    expect(sortTitle('The Beatles Anthology', 'de')).toBe('the beatles anthology');
    expect(sortTitle('A Coruña', 'es')).toBe('a coruña');
  });

  it('drops an elided article, with a straight or a typographic apostrophe', () => {
    expect(sortTitle("L'Étranger", 'fr')).toBe('étranger');
    expect(sortTitle('L’Étranger', 'fra')).toBe('étranger');
    expect(sortTitle('L’amica geniale', 'ita')).toBe('amica geniale');
    expect(sortTitle('L’Étranger')).toBe('étranger');
  });

  it("drops any language's article when the language is unknown or absent, as before", () => {
    expect(sortTitle('The Hobbit')).toBe('hobbit');
    expect(sortTitle('Das Boot', null)).toBe('boot');
    expect(sortTitle('Los Detectives Salvajes', 'xx')).toBe('detectives salvajes');
    expect(sortTitle('Die Hard', 'ja')).toBe('hard');
  });

  it('keeps a title that is only an article, and a word that only begins like one', () => {
    expect(sortTitle('The', 'en')).toBe('the');
    expect(sortTitle('Theory of Everything', 'en')).toBe('theory of everything');
    expect(sortTitle('Lampedusa', 'it')).toBe('lampedusa');
  });
});
