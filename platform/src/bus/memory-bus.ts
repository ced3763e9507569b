// Embedded mode's bus. Events are read straight from the sources' event stores, so delivery
// survives a restart exactly as the stores do: a consumer resumes from the checkpoint it saved.
import { err, fail, type StoredEvent } from '@bindery/contracts';
import type { EventStore } from '../event-store';
import { Wake } from './wake';
import { RpcUnavailableError, type Bus, type ConsumeOptions, type FollowOptions, type RpcHandler, type Subscription } from './types';

const POLL_MS = 500;
const BATCH = 200;

export class MemoryBus implements Bus {
  readonly kind = 'memory' as const;
  private sources = new Map<string, EventStore>();
  private sourceWaiters = new Map<string, Set<() => void>>();
  private handlers = new Map<string, RpcHandler>();
  private subs = new Set<Subscription>();
  private inflight = new Set<Promise<unknown>>();
  private closed = false;

  async attachSource(store: EventStore): Promise<void> {
    this.sources.set(store.source, store);
    store.onAppend(() => this.sourceWaiters.get(store.source)?.forEach((w) => w()));
    this.sourceWaiters.get(store.source)?.forEach((w) => w());
  }

  private async source(name: string): Promise<EventStore> {
    // A consumer may start before its source's service in the same process: wait for it.
    for (;;) {
      const s = this.sources.get(name);
      if (s) return s;
      if (this.closed) throw new Error('bus closed');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private loop(sourceName: string, start: () => Promise<number>, types: readonly string[] | undefined, handler: (e: StoredEvent) => Promise<void>): Subscription {
    const wake = new Wake();
    let running = true;
    let set = this.sourceWaiters.get(sourceName);
    if (!set) this.sourceWaiters.set(sourceName, (set = new Set()));
    const w = () => wake.wake();
    set.add(w);
    const done = (async () => {
      const store = await this.source(sourceName);
      let pos = await start();
      while (running) {
        let batch: StoredEvent[];
        try {
          batch = await store.readAll(pos, BATCH);
        } catch {
          if (!running) break;
          await wake.wait(POLL_MS);
          continue;
        }
        for (const ev of batch) {
          if (!running) break;
          if (!types || types.includes(ev.type)) {
            // At-least-once: retry the same event until its handler succeeds.
            for (let attempt = 0; running; attempt++) {
              try {
                await handler(ev);
                break;
              } catch {
                await wake.wait(Math.min(50 * 2 ** attempt, 2000));
              }
            }
            if (!running) break;
          }
          pos = ev.position;
        }
        if (batch.length < BATCH && running) await wake.wait(POLL_MS);
      }
    })();
    const sub: Subscription = {
      stop: async () => {
        running = false;
        set!.delete(w);
        wake.wake();
        await done.catch(() => undefined);
        this.subs.delete(sub);
      },
    };
    this.subs.add(sub);
    return sub;
  }

  async consume(opts: ConsumeOptions): Promise<Subscription> {
    return this.loop(opts.source, opts.checkpoint, opts.types, opts.handler);
  }

  async follow(opts: FollowOptions): Promise<Subscription> {
    return this.loop(opts.source, async () => 0, opts.types, opts.handler);
  }

  async serve(service: string, handlers: Record<string, RpcHandler>): Promise<void> {
    for (const [op, h] of Object.entries(handlers)) this.handlers.set(`bindery.rpc.${service}.${op}`, h);
  }

  async request(subject: string, body: unknown): Promise<unknown> {
    const h = this.handlers.get(subject);
    if (!h || this.closed) throw new RpcUnavailableError(subject, 'no responders');
    // Copy across the boundary as the wire would: no shared objects between services.
    // A handler that throws answers with the internal failure, exactly as the NATS adapter does.
    const p = h(JSON.parse(JSON.stringify(body ?? null))).then(
      (r) => (r === undefined ? null : JSON.parse(JSON.stringify(r))),
      (e: unknown) => err(fail('internal', e instanceof Error ? e.message : String(e))),
    );
    this.inflight.add(p);
    try {
      return await p;
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
