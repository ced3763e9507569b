// The page render child's entry in the bundle (embedded/dist/render-worker.js): the gateway starts
// it next to its own code (services/gateway/src/opds/render-child.ts). It imports nothing else.
import '@bindery/gateway/render-worker';
