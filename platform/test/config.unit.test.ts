import { describe, expect, it } from 'vitest';
import Type from 'typebox';
import { BaseConfig, ConfigError, loadConfig } from '../src/config';

const Schema = Type.Object({
  ...BaseConfig.properties,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  COOKIE_SECURE: Type.Boolean({ default: false }),
});

describe('loadConfig', () => {
  it('applies defaults and converts types', () => {
    const c = loadConfig(Schema, { PORT: '9090', COOKIE_SECURE: 'true' });
    expect(c.PORT).toBe(9090);
    expect(c.COOKIE_SECURE).toBe(true);
    expect(c.DATA_DIR).toBe('./data');
    expect(c.LOG_LEVEL).toBe('info');
  });
  it('names the variable that is out of range', () => {
    expect(() => loadConfig(Schema, { PORT: '70000' })).toThrow(new ConfigError('PORT', 'must be between 0 and 65535, got "70000"'));
  });
  it('names the variable that is not a number', () => {
    expect(() => loadConfig(Schema, { PORT: 'eighty' })).toThrow(/invalid configuration: PORT must be a number/);
  });
  it('refuses a boolean that is not true or false', () => {
    expect(() => loadConfig(Schema, { COOKIE_SECURE: 'yes' })).toThrow(/COOKIE_SECURE must be true or false/);
  });
  it('refuses a short JWT secret and a non-postgres database URL', () => {
    expect(() => loadConfig(Schema, { JWT_SECRET: 'short' })).toThrow(/JWT_SECRET must be at least 32 characters/);
    expect(() => loadConfig(Schema, { DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL must be matching/);
  });
  it('refuses an unknown log level', () => {
    expect(() => loadConfig(Schema, { LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL must be one of fatal, error, warn/);
  });
});
