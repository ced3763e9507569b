// One Prometheus registry per process: what the ops listener's /metrics shows.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BusStatus } from './bus/types';

export type RpcSide = 'client' | 'server';
/** ok: a value; failed: the service answered with a failure; error: it threw; unavailable: nobody answered in time */
export type RpcOutcome = 'ok' | 'failed' | 'error' | 'unavailable';

/** Something that can count its parked events at scrape time (a service's parking lot). */
export interface ParkedCounter {
  pendingByConsumer(): Promise<{ consumer: string; count: number }[]>;
}

const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** the steps of one write inside the system: a millisecond or a few each */
const STEP_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
const COUNT_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly rpcDuration: Histogram<'side' | 'subject' | 'outcome'>;
  readonly handlerFailures: Counter<'consumer'>;
  readonly eventsParked: Counter<'consumer'>;
  /** the gateway: how long a write's answer waited for the read models to apply it */
  readonly readYourWrites: Histogram<'source' | 'outcome'>;
  /** the outbox relay's passes that published events, and how many each took */
  readonly relayPass: Histogram<'source'>;
  readonly relayPassEvents: Histogram<'source'>;
  /** a durable consumer's delivery: applying its events, then the confirmed ack */
  readonly consumerDelivery: Histogram<'consumer' | 'step'>;
  /** group-committed transactions (platform/src/group-commit.ts) and the jobs each carried */
  readonly groupCommit: Histogram<'name'>;
  readonly groupCommitJobs: Histogram<'name'>;
  private buses = new Set<() => BusStatus>();
  private lots = new Set<ParkedCounter>();

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const histogram = <L extends string>(name: string, help: string, labelNames: L[], buckets: number[]) => new Histogram<L>({ name, help, labelNames, buckets, registers });
    this.httpDuration = histogram(
      'bindery_http_request_duration_seconds',
      'HTTP requests served by the gateway, by route pattern and status',
      ['method', 'route', 'status'],
      LATENCY_BUCKETS,
    );
    this.rpcDuration = histogram(
      'bindery_rpc_duration_seconds',
      'Request/reply calls over the bus: side=client as sent, side=server as handled',
      ['side', 'subject', 'outcome'],
      LATENCY_BUCKETS,
    );
    this.handlerFailures = new Counter({ name: 'bindery_event_handler_failures_total', help: 'Event handler attempts that threw', labelNames: ['consumer'], registers });
    this.eventsParked = new Counter({ name: 'bindery_events_parked_total', help: 'Events set aside after their handler kept failing', labelNames: ['consumer'], registers });
    this.readYourWrites = histogram(
      'bindery_read_your_writes_wait_seconds',
      "How long a write's answer waited for the gateway's read models to apply it, by source; outcome reached or timeout",
      ['source', 'outcome'],
      STEP_BUCKETS,
    );
    this.relayPass = histogram(
      'bindery_outbox_relay_pass_seconds',
      'Outbox relay passes that published events: reading them from the log, publishing, moving the checkpoint',
      ['source'],
      STEP_BUCKETS,
    );
    this.relayPassEvents = histogram('bindery_outbox_relay_pass_events', 'Events published by one outbox relay pass', ['source'], COUNT_BUCKETS);
    this.consumerDelivery = histogram(
      'bindery_consumer_delivery_seconds',
      "A durable consumer's delivery from the bus: step apply (its handlers) and step ack (until the server confirmed the ack)",
      ['consumer', 'step'],
      STEP_BUCKETS,
    );
    this.groupCommit = histogram(
      'bindery_group_commit_batch_seconds',
      'Group-committed transactions, from their start to their outcome (each job of a failed batch run again alone counts in it)',
      ['name'],
      STEP_BUCKETS,
    );
    this.groupCommitJobs = histogram('bindery_group_commit_batch_jobs', 'Jobs carried by one group-committed transaction', ['name'], COUNT_BUCKETS);

    const buses = this.buses;
    const lots = this.lots;
    new Gauge({
      name: 'bindery_outbox_relay_lag_events',
      help: 'Events appended to a source but not yet published on the bus',
      labelNames: ['source'],
      registers,
      async collect() {
        this.reset();
        for (const status of buses) {
          for (const r of await status()
            .relayLag()
            .catch(() => []))
            this.set({ source: r.source }, r.lag);
        }
      },
    });
    new Gauge({
      name: 'bindery_consumer_lag_events',
      help: 'Events of the source a durable consumer has not applied yet',
      labelNames: ['consumer', 'source'],
      registers,
      async collect() {
        this.reset();
        for (const status of buses) {
          for (const c of status().consumers) {
            if (c.kind !== 'durable') continue;
            const lag = await c.lag().catch(() => null);
            if (lag !== null) this.set({ consumer: c.name, source: c.source }, lag);
          }
        }
      },
    });
    new Gauge({
      name: 'bindery_parked_events',
      help: 'Parked events waiting for a replay, per consumer',
      labelNames: ['consumer'],
      registers,
      async collect() {
        this.reset();
        for (const lot of lots) {
          for (const r of await lot.pendingByConsumer().catch(() => [])) this.set({ consumer: r.consumer }, r.count);
        }
      },
    });
  }

  /** Relay and consumer lag are read from this bus at scrape time. */
  watchBus(status: () => BusStatus): void {
    this.buses.add(status);
  }

  watchParking(lot: ParkedCounter): void {
    this.lots.add(lot);
  }

  /** Starts timing an RPC; the returned function records it with its outcome. */
  rpcTimer(side: RpcSide, subject: string): (outcome: RpcOutcome) => void {
    const end = this.rpcDuration.startTimer({ side, subject });
    return (outcome) => void end({ outcome });
  }

  /**
   * A counter a service defines for its own work, in this process's registry. Asking again for the
   * same name (a service started twice in one process) gives the one already registered.
   */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return (this.registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  /** A histogram a service defines for its own work (as `counter`). */
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return (this.registry.getSingleMetric(name) as Histogram<L> | undefined) ?? new Histogram({ name, help, labelNames, buckets, registers: [this.registry] });
  }

  /** Prometheus text exposition. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** How a reply to an RPC counts: a `{ ok: false }` result is a failure the service chose to answer. */
export function rpcOutcomeOf(reply: unknown): RpcOutcome {
  return reply !== null && typeof reply === 'object' && (reply as { ok?: unknown }).ok === false ? 'failed' : 'ok';
}
