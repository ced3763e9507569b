export { catalogService, type CatalogOptions } from './main';
