export { catalogService, DEFAULT_LIBRARY_ROOTS, type CatalogOptions } from './main';
