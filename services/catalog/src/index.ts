export { catalogService, DEFAULT_LIBRARY_ROOTS, type CatalogOptions } from './main';
export { migrations, SCHEMA } from './store/migrations';
export { REPLAYED_TABLES, replayCatalog } from './store/projection';
export type { CatalogDb } from './store/schema';
