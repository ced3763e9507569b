// @bindery/web: the browser app the gateway mounts (see routes.tsx).
export { webRoutes, type WebDeps } from './routes';
export { CSP, localTarget } from './http';
export { schemeOf } from './theme';
