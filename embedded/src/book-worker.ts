// The book thread's entry in the bundle (embedded/dist/book-worker.js): the catalog starts it next
// to its own code (services/catalog/src/formats/book-thread.ts). It imports nothing else.
import '@bindery/catalog/book-worker';
