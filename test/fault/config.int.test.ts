// A bad configuration value stops the process at start, with a message naming the variable.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { entryArgs, ROOT } from '../support/bindery';

// the bundle the run built (as `pnpm start` runs it), which starts in a fraction of the sources' time under tsx
const run = (entry: 'main' | 'service', env: Record<string, string>) =>
  spawnSync(process.execPath, entryArgs(entry), {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: '/nonexistent-bindery-config-test', ...env },
    encoding: 'utf8',
    timeout: 60000,
  });

describe('configuration errors stop the process', () => {
  it.each([
    [{ PORT: 'eighty' }, 'invalid configuration: PORT must be a number, got "eighty"'],
    [{ PORT: '70000' }, 'invalid configuration: PORT must be between 0 and 65535, got "70000"'],
    [{ COOKIE_SECURE: 'yes' }, 'invalid configuration: COOKIE_SECURE must be true or false, got "yes"'],
    [{ JWT_SECRET: 'too-short' }, 'invalid configuration: JWT_SECRET must be at least 32 characters'],
    [{ DATABASE_URL: 'postgres://127.0.0.1/x' }, 'invalid configuration: NATS_URL is required in distributed mode'],
    [{ PGLITE_SHARED_BUFFERS: '128' }, 'invalid configuration: PGLITE_SHARED_BUFFERS must be matching ^[1-9][0-9]*(kB|MB|GB)$, got "128"'],
    [{ NATS_STREAM_REPLICAS: '0' }, 'invalid configuration: NATS_STREAM_REPLICAS must be between 1 and 5, got "0"'],
    [{ DATABASE_URL: 'postgres://127.0.0.1:1/x', NATS_URL: 'nats://127.0.0.1:1', NATS_USER: 'catalog' }, 'invalid configuration: NATS_PASSWORD is required with NATS_USER'],
    [
      { DATABASE_URL: 'postgres://127.0.0.1:1/x', NATS_URL: 'nats://127.0.0.1:1', NATS_CREDS: '/x.creds', NATS_USER: 'catalog' },
      'invalid configuration: NATS_CREDS and NATS_USER are exclusive',
    ],
  ])('%o', (env, message) => {
    const r = run('main', env as Record<string, string>);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(message);
  });

  it('a distributed service refuses to start without DATABASE_URL and NATS_URL', () => {
    const r = run('service', { BINDERY_SERVICES: 'identity' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('invalid configuration: DATABASE_URL and NATS_URL are required for a distributed service');
  });
});
