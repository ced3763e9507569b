// The bus port: events (durable and follow-from-start delivery) and request/reply.
import type { StoredEvent } from '@bindery/contracts';

export type EventHandler = (event: StoredEvent) => Promise<void>;

export interface ConsumeOptions {
  /** source service whose events to receive */
  source: string;
  /** consumer name, shared by every replica of the consuming service */
  durable: string;
  /** exact event types wanted; others are skipped (and count as handled) */
  types?: readonly string[];
  /** the position this consumer last applied (its own store keeps it, with the effect) */
  checkpoint(): Promise<number>;
  handler: EventHandler;
  /**
   * Several consecutive events at once, where the consumer can: given the wanted events that follow
   * (in position order), applies a leading run of them and answers how many (0: none, `handler` takes
   * the first as usual). A failure counts as 0. The in-memory bus offers what one read of the log
   * returned; the JetStream bus, the wanted events of the run one message carries (a relay's batch).
   */
  handleMany?: (events: StoredEvent[]) => Promise<number>;
  /**
   * Where an event goes when its handler fails `retry.attempts` times in a row; the consumer then
   * moves on. Without one the bus keeps retrying (logged at error level, the consumer shows as stuck).
   */
  parking?: Parking;
}

/**
 * After a consumer refused to fold a run (`handleMany` answered 0), this many of the wanted events
 * that follow go to the handler one at a time before a run is offered again: a refused run may have
 * cost the consumer a statement, and the next would likely be refused too.
 */
export const AFTER_REFUSED = 16;

/** A service's parked events: the bus parks into it and registers the handler replays run through. */
export interface Parking {
  park(consumer: string, event: StoredEvent, error: string, attempts: number): Promise<void>;
  attach(consumer: string, handler: EventHandler): void;
}

/** Bounded retries of a failing event handler: `attempts` tries, waiting base·2^n (at most maxMs) between. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

/** 10 tries over about 80 s: long enough to ride out a database failover, short enough to notice. */
export const DEFAULT_RETRY: RetryPolicy = { attempts: 10, baseMs: 200, maxMs: 30_000 };

/** What readiness and /metrics read from a bus. */
export interface BusStatus {
  connected: boolean;
  consumers: ConsumerStatus[];
  /** per attached source: events appended but not yet published (0 where the bus reads the store itself) */
  relayLag(): Promise<{ source: string; lag: number }[]>;
}

export interface ConsumerStatus {
  /** the durable name, or `follow:<source>` */
  name: string;
  kind: 'durable' | 'follower';
  source: string;
  /** false once its loop ended on an error */
  running: boolean;
  /** since when (ms epoch) the event in hand has been handled or retried; null when idle */
  busySince: number | null;
  /** what of the source is not applied yet (events; on the JetStream bus, runs of them); 0 when caught up; null when unknown */
  lag(): Promise<number | null>;
}

export interface FollowOptions {
  source: string;
  types?: readonly string[];
  handler: EventHandler;
  /**
   * `start` (the default): every event from the first, for read models. `now`: only events
   * appended after follow() resolves (a live feed such as the WebSocket channel); a source that
   * does not exist yet is followed from its first event once it appears.
   */
  from?: 'start' | 'now';
}

export interface Subscription {
  /** stop taking new events and wait for the one in hand */
  stop(): Promise<void>;
}

export type RpcHandler = (body: unknown) => Promise<unknown>;

export class RpcUnavailableError extends Error {
  constructor(subject: string, why: string) {
    super(`${subject}: ${why}`);
  }
}

/** What the bus reads of a service's log: it needs none of the service's own tables. */
export interface EventLog {
  readonly source: string;
  readAll(after: number, limit?: number): Promise<StoredEvent[]>;
  headPosition(): Promise<number>;
  relayPosition(name: string): Promise<number>;
  relayOnce(name: string, publish: (events: StoredEvent[]) => Promise<void>, batch?: number): Promise<number>;
  onAppend(listener: () => void): () => void;
  /** Keeps the events this process commits through `commandTransaction` in memory (`recent`). */
  keepRecent?(): void;
  /** The committed events right after `after` that this process still holds, in order (none: read the log). */
  recent?(after: number, limit: number): StoredEvent[];
}

export interface Bus {
  readonly kind: 'memory' | 'nats';
  /** Makes a service's event store a source: the NATS bus runs its outbox relay; the memory bus reads it directly. */
  attachSource(store: EventLog): Promise<void>;
  /** At-least-once, in position order, shared by replicas of one durable consumer. */
  consume(opts: ConsumeOptions): Promise<Subscription>;
  /** Every instance gets every event from the first (or from now), then live: per-process read models and feeds. */
  follow(opts: FollowOptions): Promise<Subscription>;
  /** connection and consumer state, read by readiness and /metrics */
  status(): BusStatus;
  /** Serves request/reply endpoints `rpc.<service>.<op>`; replicas share the load. */
  serve(service: string, handlers: Record<string, RpcHandler>): Promise<void>;
  request(subject: string, body: unknown, timeoutMs?: number): Promise<unknown>;
  /** Drain: stop serving and consuming, finish what is in flight, flush the relay. */
  close(): Promise<void>;
  /**
   * Publishes a transient message (scan progress, presence): at most once, to whoever listens
   * now, never stored or replayed. Fire and forget: a closed or unreachable bus drops it.
   */
  notify(subject: string, data: unknown): void;
  /**
   * Receives transient messages on `subject` (`*` matches one token, `>` the rest). Every
   * listening instance gets each message; nothing sent before or while not listening arrives.
   * Resolves once the subscription is in place.
   */
  listen(subject: string, handler: TransientHandler): Promise<Subscription>;
}

/** Receives a transient message: its body (a copy, as the wire gives it) and the subject it came on. */
export type TransientHandler = (data: unknown, subject: string) => void | Promise<void>;
