export { gatewayService, type GatewayOptions } from './main';
export { buildApp } from './app';
export { wsRoutes } from './web-api/ws';
export { LiveHub } from './live/hub';
export { parsePublicUrls } from './http/origin';
export { scrubSecrets } from './http/log-secrets';
