export * from './events';
export * from './rpc';
export * from './query';
export * from './browse';
export * from './transient';
export * from './kepub';
