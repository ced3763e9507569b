// Typed configuration from the environment, validated once at start.
import Type, { type TObject, type Static } from 'typebox';
import { Compile } from 'typebox/compile';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`invalid configuration: ${variable} ${detail}`);
  }
}

/**
 * Reads every property of `schema` from `env` (upper-case names), converting numbers and booleans,
 * applying defaults, and throwing a ConfigError that names the first bad variable.
 */
export function loadConfig<S extends TObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Static<S> {
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(schema.properties) as [string, Record<string, unknown>][]) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      if ('default' in prop) out[name] = prop.default;
      continue;
    }
    out[name] = coerce(name, raw, prop);
    const check = Compile(prop as never);
    if (!check.Check(out[name])) throw new ConfigError(name, describe(prop, raw));
  }
  const whole = Compile(schema);
  if (!whole.Check(out)) {
    const missing = Object.keys(schema.properties).find((k) => out[k] === undefined && (schema.required ?? []).includes(k));
    throw new ConfigError(missing ?? 'environment', missing ? 'is required' : 'is invalid');
  }
  return out as Static<S>;
}

function coerce(name: string, raw: string, prop: Record<string, unknown>): unknown {
  switch (prop.type) {
    case 'integer':
    case 'number': {
      const n = Number(raw.trim());
      if (!Number.isFinite(n) || raw.trim() === '') throw new ConfigError(name, `must be a number, got "${raw}"`);
      return n;
    }
    case 'boolean':
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw new ConfigError(name, `must be true or false, got "${raw}"`);
    default:
      return raw;
  }
}

function describe(prop: Record<string, unknown>, raw: string): string {
  const bits: string[] = [];
  if (prop.minimum !== undefined || prop.maximum !== undefined) bits.push(`between ${prop.minimum ?? '-inf'} and ${prop.maximum ?? 'inf'}`);
  if (prop.minLength !== undefined) bits.push(`at least ${prop.minLength} characters`);
  if (Array.isArray(prop.anyOf)) bits.push(`one of ${prop.anyOf.map((p: { const?: unknown }) => p.const).join(', ')}`);
  if (prop.pattern) bits.push(`matching ${prop.pattern}`);
  return `must be ${bits.join(', ') || `valid (${String(prop.type)})`}, got "${raw.length > 40 ? raw.slice(0, 40) + '…' : raw}"`;
}

/** The variables every Bindery process reads. Services add their own with Type.Composite / spread. */
export const BaseConfig = Type.Object({
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  DATA_DIR: Type.String({ default: './data', minLength: 1 }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  /** distributed mode: the most Postgres connections this process opens (its share of the server's budget) */
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  NATS_URL: Type.Optional(Type.String({ pattern: '^(nats|tls|ws|wss)://' })),
  /** this process's NATS user (with NATS_PASSWORD), or NATS_CREDS: a .creds file (JWT + nkey seed) */
  NATS_USER: Type.Optional(Type.String({ minLength: 1 })),
  NATS_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
  NATS_CREDS: Type.Optional(Type.String({ minLength: 1 })),
  /** copies of each event stream JetStream keeps (a clustered server: 3) */
  NATS_STREAM_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
  /** PGlite's shared_buffers in embedded mode (Postgres units: kB, MB, GB) */
  PGLITE_SHARED_BUFFERS: Type.String({ default: '32MB', pattern: '^[1-9][0-9]*(kB|MB|GB)$' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  RPC_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120000, default: 10000 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600000, default: 15000 }),
});
export type BaseConfig = Static<typeof BaseConfig>;
