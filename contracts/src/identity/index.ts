export * from './events';
export * from './rpc';
export * from './mail-events';
export * from './mail-rpc';
export * from './oidc';
export * from './languages';
