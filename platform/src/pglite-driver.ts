// Kysely's driver for PGlite, with prepared statements. PGlite's own `query` parses, describes and
// plans every statement anew in six protocol calls; here a statement text is parsed and described
// once under a name, and each later run is one Bind, Execute and Sync (one call), planned from
// Postgres' plan cache. A one-row insert or a primary-key select costs about a quarter of what
// `query` costs (decision 89).
import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { LRUCache } from 'lru-cache';

/** What the driver takes from `@electric-sql/pglite` (loaded by the caller: distributed processes never load it). */
export interface PGliteModule {
  protocol: typeof import('@electric-sql/pglite').protocol;
  parse: typeof import('@electric-sql/pglite').parse;
}

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Prepared {
  name: string;
  /** the parameters' type OIDs, as Postgres inferred them */
  types: number[];
  /** the statement's row description (none for a statement without rows) */
  rows: BackendMessage | undefined;
}

/** Statements kept prepared; the least recently run is closed past it. */
const KEPT = 256;
/** A statement with more parameters than this (a many-row insert) is run once, not kept. */
const MAX_KEPT_PARAMS = 64;
const KEPT_TEXT = /^\s*(?:select|insert|update|delete|with)\b/i;
/** After one of these succeeds, every kept statement is closed (a kept plan's result columns may have changed). */
const SCHEMA_CHANGE = /^\s*(?:create|alter|drop|truncate|comment|do|grant|revoke|reindex)\b/i;
/** Postgres' answers to a statement prepared before the schema changed under it. */
const STALE = new Set(['0A000', '26000']);

export class PreparedPGliteDialect implements Dialect {
  constructor(
    private readonly lite: PGlite,
    private readonly mod: PGliteModule,
  ) {}
  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PreparedPGliteDriver(this.lite, this.mod);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

class PreparedPGliteDriver implements Driver {
  private readonly connection: PreparedPGliteConnection;
  /** one connection, one user at a time: the next waits here */
  private held = false;
  private readonly waiting: (() => void)[] = [];
  private closed = false;

  constructor(
    private readonly lite: PGlite,
    mod: PGliteModule,
  ) {
    this.connection = new PreparedPGliteConnection(lite, mod);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.closed) throw new Error('PGlite is closed');
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
    return this.connection;
  }
  async releaseConnection(): Promise<void> {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw(settings.isolationLevel ? `start transaction isolation level ${settings.isolationLevel}` : 'begin'));
  }
  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }
  async destroy(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.lite.close();
  }
}

class PreparedPGliteConnection implements DatabaseConnection {
  private next = 0;
  /** names of statements dropped from `kept`, closed at the start of the next call */
  private toClose: string[] = [];
  private readonly kept: LRUCache<string, Prepared>;

  constructor(
    private readonly lite: PGlite,
    private readonly mod: PGliteModule,
  ) {
    this.kept = new LRUCache<string, Prepared>({ max: KEPT, dispose: (p) => this.toClose.push(p.name) });
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const text = compiled.sql;
    const params = compiled.parameters;
    const result = await this.lite.runExclusive(async () => {
      try {
        const dml = KEPT_TEXT.test(text);
        if (params.length === 0 && !dml) return await this.once(text);
        const keep = dml && params.length <= MAX_KEPT_PARAMS;
        const stmt = (keep ? this.kept.get(text) : undefined) ?? (await this.prepare(text, keep));
        return await this.run(stmt, params);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code && STALE.has(code)) this.kept.delete(text);
        // the statement, not its parameters (a value may be a secret), goes with the error
        throw Object.assign(e as object, { query: text });
      }
    });
    if (SCHEMA_CHANGE.test(text)) await this.forgetAll();
    const rows = result.rows as R[];
    return result.affectedRows ? { rows, numAffectedRows: BigInt(result.affectedRows) } : { rows };
  }

  async *streamQuery<R>(compiled: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error('chunkSize must be a positive integer');
    const { rows } = await this.executeQuery<R>(compiled);
    for (let i = 0; i < rows.length; i += chunkSize) yield { rows: rows.slice(i, i + chunkSize) };
  }

  /** A statement without parameters that is not kept (begin, commit, DDL): one call. */
  private async once(text: string) {
    const s = this.mod.protocol.serialize;
    return this.call([s.parse({ text }), s.bind({}), s.describe({ type: 'P' }), s.execute({}), s.sync()], undefined);
  }

  private async prepare(text: string, keep: boolean): Promise<Prepared> {
    const s = this.mod.protocol.serialize;
    const name = keep ? `b${++this.next}` : '';
    const messages = await this.exec([s.parse({ name, text }), s.describe({ type: 'S', name }), s.sync()]);
    const described = messages.find((m) => m.name === 'parameterDescription') as { dataTypeIDs: number[] } | undefined;
    const stmt: Prepared = { name, types: described?.dataTypeIDs ?? [], rows: messages.find((m) => m.name === 'rowDescription') };
    if (keep) this.kept.set(text, stmt);
    return stmt;
  }

  private async run(stmt: Prepared, params: readonly unknown[]) {
    const s = this.mod.protocol.serialize;
    const values = params.map((p, i) => {
      if (p === null || p === undefined) return null;
      const serialize = this.lite.serializers[stmt.types[i]!];
      return serialize ? serialize(p) : String(p);
    });
    return this.call([s.bind({ statement: stmt.name, values: values as string[] }), s.execute({}), s.sync()], stmt.rows);
  }

  private async call(messages: Uint8Array[], rows: BackendMessage | undefined) {
    const answer = await this.exec(messages);
    const [result] = this.mod.parse.parseResults(rows ? [rows, ...answer] : answer, this.lite.parsers);
    if (!this.lite.isInTransaction()) await this.lite.syncToFs();
    return result!;
  }

  /** Sends the messages (after any pending Close) as one protocol call; a database error is thrown once Sync has run. */
  private exec(messages: Uint8Array[]): Promise<BackendMessage[]> {
    const s = this.mod.protocol.serialize;
    if (this.toClose.length) {
      messages.unshift(...this.toClose.map((name) => s.close({ type: 'S', name })));
      this.toClose = [];
    }
    let size = 0;
    for (const m of messages) size += m.length;
    const buf = new Uint8Array(size);
    let at = 0;
    for (const m of messages) {
      buf.set(m, at);
      at += m.length;
    }
    return this.lite.execProtocolStream(buf, { syncToFs: false });
  }

  /** The schema changed: every kept statement is closed now (a later run prepares it again). */
  private async forgetAll(): Promise<void> {
    if (this.kept.size === 0 && this.toClose.length === 0) return;
    this.kept.clear();
    await this.lite.runExclusive(() => this.exec([this.mod.protocol.serialize.sync()]));
  }
}
