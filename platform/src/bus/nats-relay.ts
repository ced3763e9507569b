// A service's outbox relay to JetStream: publishes the store's log from its checkpoint, in order.
import type { StoredEvent } from '@bindery/contracts';
import type { EventLog } from './types';
import type { Logger } from '../logger';
import { Wake } from './wake';
import { backoff, pause } from './retry';

export const RELAY = 'jetstream';
const RELAY_TICK_MS = 250;
const RELAY_BATCH = 256;
/**
 * The least time between two passes that found events, unless a source sets its own. An idle relay
 * publishes an append at once; under a stream of appends, a pass takes what a few milliseconds
 * brought (one transaction and one round of acknowledgements for several events, not one each).
 */
export const RELAY_MIN_GAP_MS = 8;

export interface RelayTarget {
  ensureStream(source: string): Promise<void>;
  /** resolves once JetStream acknowledged every event of the batch */
  publishBatch(events: StoredEvent[]): Promise<void>;
}

type BusLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** Runs a store's outbox relay until stopped: on append, on a fallback tick, and with backoff on errors. */
export class Relay {
  private readonly wake = new Wake();
  private readonly ctl = new AbortController();
  private readonly off: () => void;
  private readonly done: Promise<void>;

  constructor(
    readonly store: EventLog,
    private readonly bus: RelayTarget,
    private readonly log: BusLogger,
    /** told of each pass that published events: how many, and how long the pass took in seconds */
    private readonly observe?: (events: number, seconds: number) => void,
    /** the least time between two passes that found events */
    private readonly gapMs = RELAY_MIN_GAP_MS,
  ) {
    this.off = store.onAppend(() => this.wake.wake());
    this.done = this.run();
  }

  private async run(): Promise<void> {
    let streamReady = true;
    let busyAt = -Infinity;
    for (let failures = 0; !this.ctl.signal.aborted; ) {
      try {
        if (!streamReady) await this.bus.ensureStream(this.store.source);
        streamReady = true;
        const gap = busyAt + this.gapMs - performance.now();
        if (gap > 0) await pause(gap, this.ctl.signal);
        const started = performance.now();
        const n = await this.store.relayOnce(RELAY, this.bus.publishBatch, RELAY_BATCH);
        if (n > 0) {
          busyAt = performance.now();
          this.observe?.(n, (busyAt - started) / 1000);
        }
        failures = 0;
        // fewer than a batch: all that was committed is out (an append since has woken us again)
        if (n < RELAY_BATCH) await this.wake.wait(RELAY_TICK_MS);
      } catch (e) {
        // NATS or the database is away: keep the checkpoint, back off, try again (the stream may be gone too).
        streamReady = false;
        this.log.warn({ err: e, source: this.store.source, attempt: ++failures }, 'outbox relay failed; retrying');
        await pause(backoff(failures), this.ctl.signal);
      }
    }
  }

  /** Lets the batch in hand finish, then flushes what is committed by now. */
  async stop(): Promise<void> {
    this.ctl.abort();
    this.off();
    this.wake.wake();
    await this.done;
    try {
      for (let i = 0; i < 100 && (await this.store.relayOnce(RELAY, this.bus.publishBatch)) > 0; i++);
    } catch (e) {
      this.log.warn({ err: e, source: this.store.source }, 'final relay flush failed; the next start publishes the rest');
    }
  }
}
