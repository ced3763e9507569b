// @bindery/web: the browser app the gateway mounts (see routes.tsx).
export type { WebDeps } from './context';
export { webRoutes } from './routes';
export { CSP, localTarget } from './http';
export { schemeOf } from './theme';
export { localizedApiError } from './i18n/request';
