// Embedded mode's bus. Events are read straight from the sources' event stores, so delivery
// survives a restart exactly as the stores do: a consumer resumes from the checkpoint it saved.
import { err, fail, type StoredEvent } from '@bindery/contracts';
import { deepFreeze } from '../event-store';
import { createLogger, currentRequestId, withRequestId } from '../logger';
import { rpcOutcomeOf, type Metrics } from '../metrics';
import { Wake } from './wake';
import { handlerFailed, type BusLogger } from './failures';
import { pause, retryDelay } from './retry';
import {
  AFTER_REFUSED,
  DEFAULT_RETRY,
  RpcUnavailableError,
  type Bus,
  type BusStatus,
  type ConsumeOptions,
  type ConsumerStatus,
  type EventLog,
  type FollowOptions,
  type Parking,
  type RetryPolicy,
  type RpcHandler,
  type Subscription,
} from './types';

const POLL_MS = 500;
/** the longest a consumer's catch-up runs before it lets requests in (see the loop) */
const YIELD_EVERY_MS = 10;
const BATCH = 200;
/** how long one read of a log serves the other consumers asking from the same position */
const SHARE_MS = 100;

export interface MemoryBusOptions {
  logger?: BusLogger;
  metrics?: Metrics;
  retry?: RetryPolicy;
}

interface Loop {
  sourceName: string;
  start: () => Promise<number>;
  types: readonly string[] | undefined;
  handler: (e: StoredEvent) => Promise<void>;
  handleMany?: (events: StoredEvent[]) => Promise<number>;
  /** durable consumers retry a bounded number of times, then park; followers retry until it applies */
  durable?: { name: string; parking?: Parking };
}

export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private sources = new Map<string, EventLog>();
  private sourceWaiters = new Map<string, Set<() => void>>();
  /** per source, recent reads by the position they start after: consumers at the same place share one */
  private reads = new Map<string, Map<number, { at: number; batch: Promise<StoredEvent[]> }>>();
  private handlers = new Map<string, RpcHandler>();
  private subs = new Set<Subscription>();
  private consumers = new Set<ConsumerStatus>();
  private inflight = new Set<Promise<unknown>>();
  private closed = false;
  private readonly log: BusLogger;
  private readonly metrics?: Metrics;
  private readonly retry: RetryPolicy;

  constructor(opts: MemoryBusOptions = {}) {
    this.log = opts.logger ?? createLogger('bus');
    this.metrics = opts.metrics;
    this.retry = opts.retry ?? DEFAULT_RETRY;
  }

  async attachSource(store: EventLog): Promise<void> {
    this.sources.set(store.source, store);
    store.keepRecent?.();
    this.reads.set(store.source, new Map());
    store.onAppend(() => {
      // what was read before this append is not what a woken consumer must see
      this.reads.get(store.source)?.clear();
      this.sourceWaiters.get(store.source)?.forEach((w) => w());
    });
    this.sourceWaiters.get(store.source)?.forEach((w) => w());
  }

  private async source(name: string, signal: AbortSignal, attached: Wake): Promise<EventLog> {
    // A consumer may start before its source's service in the same process (or follow a service
    // this process does not run): wait for it, woken when it attaches, or for the consumer to stop.
    for (;;) {
      const s = this.sources.get(name);
      if (s) return s;
      if (this.closed || signal.aborted) throw new Error('bus closed');
      await attached.wait(1_000);
    }
  }

  private loop({ sourceName, start, types, handler, handleMany, durable }: Loop): Subscription {
    const wake = new Wake();
    const ctl = new AbortController();
    let set = this.sourceWaiters.get(sourceName);
    if (!set) {
      set = new Set();
      this.sourceWaiters.set(sourceName, set);
    }
    const w = () => wake.wake();
    set.add(w);
    const name = durable?.name ?? `follow:${sourceName}`;
    let pos = 0;
    const state: ConsumerStatus = {
      name,
      kind: durable ? 'durable' : 'follower',
      source: sourceName,
      running: true,
      busySince: null,
      lag: async () => {
        const store = this.sources.get(sourceName);
        return store ? Math.max(0, (await store.headPosition()) - pos) : null;
      },
    };
    if (durable) durable.parking?.attach(durable.name, handler);
    const deps = { log: this.log, retry: this.retry, metrics: this.metrics };
    const done = (async () => {
      const store = await this.source(sourceName, ctl.signal, wake);
      pos = await start();
      let slice = performance.now();
      while (!ctl.signal.aborted) {
        let batch: StoredEvent[];
        try {
          batch = await this.read(store, pos);
        } catch {
          if (ctl.signal.aborted) break;
          await wake.wait(POLL_MS);
          continue;
        }
        const wanted = (ev: StoredEvent) => !types || types.includes(ev.type);
        // the wanted events of this read, once; `w` is the first of them not yet behind us
        const wantedOnes = handleMany ? batch.filter(wanted) : [];
        let w = 0;
        // after a run the consumer refused, the next AFTER_REFUSED wanted events go one at a time
        let foldFrom = 0;
        for (let i = 0; i < batch.length; i++) {
          const ev = batch[i]!;
          if (ctl.signal.aborted) break;
          // PGlite answers on this thread and its promises settle as microtasks: a consumer catching
          // up on a long log (a rebuild, a first start after an upgrade) would starve every request
          // for the whole replay. Give the event loop a turn every few milliseconds of work.
          if (performance.now() - slice > YIELD_EVERY_MS) {
            await new Promise<void>((r) => setImmediate(r));
            slice = performance.now();
          }
          if (handleMany && wanted(ev)) {
            // a leading run of the wanted events at once (the consumer says how many it took)
            while (wantedOnes[w]!.position < ev.position) w++;
            const run = wantedOnes.slice(w);
            const fold = run.length > 1 && w >= foldFrom;
            const n = fold ? await handleMany(run).catch(() => 0) : 0;
            if (fold && n === 0) foldFrom = w + 1 + AFTER_REFUSED;
            if (n > 0) {
              const last = run[Math.min(n, run.length) - 1]!;
              while (i < batch.length - 1 && batch[i]!.position < last.position) i++;
              pos = last.position;
              continue;
            }
          }
          if (wanted(ev)) {
            // At-least-once: retry the same event with backoff; a durable consumer parks it after
            // its last try and goes on, a follower (a read model that may not skip) keeps trying.
            state.busySince = Date.now();
            for (let attempt = 1; !ctl.signal.aborted; attempt++) {
              try {
                await handler(ev);
                break;
              } catch (e) {
                if (await handlerFailed(deps, name, durable?.parking, ev, e, attempt)) break;
                await pause(retryDelay(this.retry, attempt), ctl.signal);
              }
            }
            state.busySince = null;
            if (ctl.signal.aborted) break;
          }
          pos = ev.position;
        }
        if (batch.length < BATCH && !ctl.signal.aborted) await wake.wait(POLL_MS);
      }
    })().catch((e) => {
      state.running = false;
      // stopped while its source never came: not an error
      if (!ctl.signal.aborted) this.log.error({ err: e, consumer: name }, 'event consumer stopped on an error');
    });
    const sub: Subscription = {
      stop: async () => {
        ctl.abort();
        set!.delete(w);
        wake.wake();
        await done;
        this.subs.delete(sub);
        this.consumers.delete(state);
      },
    };
    this.subs.add(sub);
    this.consumers.add(state);
    return sub;
  }

  /**
   * The events after `after`: one query for every consumer of the log that asks from the same
   * position within SHARE_MS of each other and of no append (an append clears them all). After an
   * event, the gateway's projection, its live feed and the other services' reactions all ask from
   * its position: one read instead of one each.
   */
  private read(store: EventLog, after: number): Promise<StoredEvent[]> {
    // the events this process just committed, as the store kept them: no read of the log
    const held = store.recent?.(after, BATCH);
    if (held?.length) return Promise.resolve(held);
    const reads = this.reads.get(store.source)!;
    const now = performance.now();
    const hit = reads.get(after);
    if (hit && now - hit.at < SHARE_MS) return hit.batch;
    if (reads.size > 64) reads.clear();
    // shared by consumers, so nobody may change one (a change would throw: modules are strict)
    const batch = store.readAll(after, BATCH).then((evs) => evs.map(deepFreeze));
    reads.set(after, { at: now, batch });
    batch.catch(() => reads.get(after)?.batch === batch && reads.delete(after));
    return batch;
  }

  async consume(opts: ConsumeOptions): Promise<Subscription> {
    return this.loop({
      sourceName: opts.source,
      start: opts.checkpoint,
      types: opts.types,
      handler: opts.handler,
      ...(opts.handleMany ? { handleMany: opts.handleMany } : {}),
      durable: { name: opts.durable, ...(opts.parking ? { parking: opts.parking } : {}) },
    });
  }

  async follow(opts: FollowOptions): Promise<Subscription> {
    // `now`: the head at this call (0 when the source is not attached yet: all of it is new)
    const from = opts.from === 'now' ? ((await this.sources.get(opts.source)?.headPosition()) ?? 0) : 0;
    return this.loop({ sourceName: opts.source, start: async () => from, types: opts.types, handler: opts.handler });
  }

  status(): BusStatus {
    return {
      connected: !this.closed,
      consumers: [...this.consumers],
      // events are read straight from the stores: nothing waits to be published
      relayLag: async () => [...this.sources.keys()].map((source) => ({ source, lag: 0 })),
    };
  }

  async serve(service: string, handlers: Record<string, RpcHandler>): Promise<void> {
    for (const [op, h] of Object.entries(handlers)) this.handlers.set(`bindery.rpc.${service}.${op}`, h);
  }

  async request(subject: string, body: unknown): Promise<unknown> {
    const h = this.handlers.get(subject);
    if (!h || this.closed) {
      this.metrics?.rpcTimer('client', subject)('unavailable');
      throw new RpcUnavailableError(subject, 'no responders');
    }
    // Copy across the boundary as the wire would: no shared objects between services.
    // A handler that throws answers with the internal failure, exactly as the NATS adapter does.
    // The request id travels as the NATS header would: the handler runs in a context holding only it.
    const requestId = currentRequestId();
    const client = this.metrics?.rpcTimer('client', subject);
    const server = this.metrics?.rpcTimer('server', subject);
    const p = withRequestId(requestId, () => h(JSON.parse(JSON.stringify(body ?? null)))).then(
      (r) => {
        server?.(rpcOutcomeOf(r));
        return r === undefined ? null : JSON.parse(JSON.stringify(r));
      },
      (e: unknown) => {
        server?.('error');
        withRequestId(requestId, () => this.log.error({ err: e, subject }, 'rpc handler threw'));
        return err(fail('internal', e instanceof Error ? e.message : String(e)));
      },
    );
    this.inflight.add(p);
    try {
      const reply = await p;
      client?.(rpcOutcomeOf(reply));
      withRequestId(requestId, () => this.log.debug({ subject }, 'rpc handled'));
      return reply;
    } finally {
      this.inflight.delete(p);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    await Promise.allSettled([...this.inflight]);
    await Promise.all([...this.subs].map((s) => s.stop()));
  }

  // ---- transient messages: this process only, delivered after the caller moves on ----------

  private listeners = new Set<{ pattern: string[]; handler: Parameters<Bus['listen']>[1] }>();

  notify(subject: string, data: unknown): void {
    if (this.closed) return;
    const tokens = subject.split('.');
    let body: string | undefined;
    for (const l of this.listeners) {
      if (!subjectMatches(l.pattern, tokens)) continue;
      body ??= JSON.stringify(data ?? null);
      setImmediate(() => {
        if (!this.listeners.has(l)) return;
        // a listener's failure is its own: the sender and the other listeners go on
        void Promise.resolve()
          .then(() => l.handler(JSON.parse(body!), subject))
          .catch(() => undefined);
      });
    }
  }

  async listen(subject: string, handler: Parameters<Bus['listen']>[1]): Promise<Subscription> {
    const l = { pattern: subject.split('.'), handler };
    this.listeners.add(l);
    return {
      stop: async () => {
        this.listeners.delete(l);
      },
    };
  }
}

/** NATS subject matching: `*` is any one token, a final `>` is one or more. */
function subjectMatches(pattern: string[], tokens: string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '>') return i === pattern.length - 1 && tokens.length > i;
    if (i >= tokens.length || (pattern[i] !== '*' && pattern[i] !== tokens[i])) return false;
  }
  return pattern.length === tokens.length;
}
