// oidc-provider ships no types (DefinitelyTyped's lag behind 9.x): the tests use it untyped.
declare module 'oidc-provider';
