// The catalog's format layer: file identity, format detection, metadata and cover extraction, thumbnails.
export type { BookFormat, BookMetadata, Contributor, Extracted } from './types';
export { BookError } from './book-error';
export { formatOf } from './format-of';
export { hashBytes, hashFile, type FileHashes } from './hash-file';
export { extract } from './extract';
export { writeCovers } from './covers';
