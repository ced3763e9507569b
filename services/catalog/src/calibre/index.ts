// Reading a calibre library (metadata.db, or a book folder's metadata.opf) into one record per book.
export { type CalibreAsk, type CalibreOutcome, changedSince, readCalibreLibrary, readCalibreOutcome } from './read-library';
export { readOpf } from './read-opf';
export { isCalibreLibrary, type ReadOptions } from './open';
export { toBookMetadata } from './to-metadata';
export * from './types';
export { calibreData } from './item-data';
export { type CalibreRead, calibreReport } from './report';
