export { gatewayService, type GatewayOptions } from './main';
export { buildApp } from './app';
