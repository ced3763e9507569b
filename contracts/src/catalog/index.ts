export * from './events';
export * from './rpc';
export * from './query';
export * from './transient';
export * from './kepub';
