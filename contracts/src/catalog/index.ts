export * from './events';
export * from './rpc';
