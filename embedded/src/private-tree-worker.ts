// The data directory walk's thread in the bundle (embedded/dist/private-tree-worker.js), started next
// to the code that launches it (platform/src/private-tree.ts). It imports nothing but node's own.
import '@bindery/platform/private-tree-worker';
