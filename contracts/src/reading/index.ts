export * from './events';
export * from './rpc';
export * from './messages';
export * as Locator from './locator';
export * from './palette';
