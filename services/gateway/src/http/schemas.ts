// The route schemas' building blocks live in the contracts (decision 119): the pages' typed API client
// (web/src/api.ts) reads the same schemas the routes declare.
export * from '@bindery/contracts/api/schemas';
