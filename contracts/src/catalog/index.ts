export * from './events';
export * from './rpc';
export * from './transient';
