export * from './errors';
export * from './text';
export * from './events';
export * from './rpc';
export * as Identity from './identity/index';
export * as Catalog from './catalog/index';
export * as Reading from './reading/index';
export * as DeviceSync from './device-sync/index';
