export * from './locator';
