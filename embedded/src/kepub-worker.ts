// The KEPUB thread's entry in the bundle (embedded/dist/kepub-worker.js): the catalog starts it next
// to its own code (services/catalog/src/formats/kepub-thread.ts). It imports nothing else.
import '@bindery/catalog/kepub-worker';
