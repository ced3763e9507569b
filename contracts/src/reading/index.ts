export * from './events';
export * from './rpc';
export * from './messages';
export * from './palette';
export * from './transient';
