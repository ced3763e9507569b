// Read your writes: while a request/reply handler runs, the event store notes the highest log
// position it appended, and the bus sends it back with the reply as `written`, so the gateway can
// wait until its read models have applied that position before it answers the client. A service
// that carries its events (trackingWrites' `carry`) also sends the events its committed
// transactions appended, when they are few: a read model that has applied everything before them
// folds them at once instead of waiting for them to come round the bus (decision 96).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StoredEvent } from '@bindery/contracts';

export interface Written {
  source: string;
  position: number;
  /**
   * the committed events the request appended, in position order, when its service carries them
   * and they are at most CARRY_MAX (none otherwise): the log's own, as stored
   */
  events?: StoredEvent[];
}

/** the most events an answer carries; a request that appended more carries none */
export const CARRY_MAX = 16;

interface Scope {
  position: number;
  /** committed events, while they are wanted and within `cap`; null otherwise */
  events: StoredEvent[] | null;
  cap: number;
}

/** the most events a batch (capturingPosition) keeps for its requests to share */
const BATCH_CAP = 1024;

const scope = new AsyncLocalStorage<Scope>();

/** Called by the event store for every append made inside a tracked handler. */
export function notePosition(position: number): void {
  const s = scope.getStore();
  if (s && position > s.position) s.position = position;
}

/** True when the running handler would carry the events it commits (the store keeps them per transaction then). */
export function carryingEvents(): boolean {
  return scope.getStore()?.events != null;
}

/** Called by the event store once a transaction that appended `events` (in position order) has committed. */
export function noteCommitted(events: readonly StoredEvent[]): void {
  const s = scope.getStore();
  if (!s || s.events === null || events.length === 0) return;
  if (s.events.length + events.length > s.cap) s.events = null;
  else {
    s.events.push(...events);
    s.events.sort((a, b) => a.position - b.position);
  }
}

/**
 * Runs `fn` apart from the request it is called in, and says the highest position it appended and
 * the events it committed (at most BATCH_CAP, else none): work done for several
 * requests at once (a batch of writes) that each request then notes as its own.
 */
export async function capturingPosition<T>(fn: () => Promise<T>): Promise<{ value: T; position: number; events: StoredEvent[] }> {
  // always kept, whatever request the batch happens to run in: each request takes its own share
  // (GroupCommit) and carries it only if it carries events; a batch may hold more than one request would
  const s: Scope = { position: 0, events: [], cap: BATCH_CAP };
  const value = await scope.run(s, fn);
  return { value, position: s.position, events: s.events ?? [] };
}

/**
 * Runs a request handler and, when it appended events and answered with a result object, adds
 * `written: {source, position}` to that answer, and the committed events when `carry` says so.
 */
export async function withWritePosition(source: string, fn: () => Promise<unknown>, carry = false): Promise<unknown> {
  const s: Scope = { position: 0, events: carry ? [] : null, cap: CARRY_MAX };
  const result = await scope.run(s, fn);
  if (s.position > 0 && result !== null && typeof result === 'object' && !Array.isArray(result)) {
    const events = s.events?.length ? { events: s.events } : {};
    return { ...(result as Record<string, unknown>), written: { source, position: s.position, ...events } satisfies Written };
  }
  return result;
}

/**
 * The bus with every served handler tracked by withWritePosition (everything else untouched); the
 * services named in `carry` send their committed events with their answers.
 */
export function trackingWrites<B extends { serve(service: string, handlers: Record<string, (body: unknown) => Promise<unknown>>): Promise<void> }>(
  bus: B,
  opts: { carry?: readonly string[] } = {},
): B {
  return new Proxy(bus, {
    get(target, prop, receiver) {
      if (prop === 'serve') {
        return (service: string, handlers: Record<string, (body: unknown) => Promise<unknown>>) => {
          const carry = opts.carry?.includes(service) ?? false;
          return target.serve(service, Object.fromEntries(Object.entries(handlers).map(([op, h]) => [op, (body: unknown) => withWritePosition(service, () => h(body), carry)])));
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}
