// Distributed mode's bus. Each source service's events live in one JetStream stream, fed by the
// service's outbox relay; request/reply runs as NATS micro services whose replicas share a queue group.
import { readFileSync } from 'node:fs';
import {
  connect,
  credsAuthenticator,
  headers,
  nanos,
  ClosedConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
  type NatsConnection,
} from '@nats-io/transport-node';
import {
  jetstreamManager,
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import { err, eventRunSubject, eventStreamName, fail, rpcSubject, type StoredEvent } from '@bindery/contracts';
import { createLogger, currentRequestId, REQUEST_ID_HEADER, withRequestId } from '../logger';
import { rpcOutcomeOf, type Metrics, type RpcOutcome } from '../metrics';
import { Relay, RELAY } from './nats-relay';
import { Wake } from './wake';
import { backoff, pause, retryDelay } from './retry';
import { handlerFailed, messageOf, type BusLogger } from './failures';
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
  type RetryPolicy,
  type RpcHandler,
  type Subscription,
} from './types';

export type { BusLogger };

const DUPLICATE_WINDOW_MS = 2 * 60_000;
// A run delivered to a replica that dies (SIGKILL, a node lost) comes to another replica only when
// its ack wait runs out, and with max_ack_pending 1 every later event of the source waits behind it:
// a short wait keeps that stall short (the drill's write p99 and live silence after a kill, issue 46).
// A handler at work says so every WORKING_EVERY_MS, so a slow run is not handed on; one that is
// (an event loop blocked past the wait) is harmless: checkpoints pass what is applied, and a later
// event reaches nobody before the run is acknowledged.
const ACK_WAIT_MS = 2_000;
const WORKING_EVERY_MS = 500;
const WRONG_LAST_MSG_ID = 10070;
// Pull requests last this long, with server heartbeats every half: after a server restart or a
// stream leader's death a consumer notices the lost request within ~2 heartbeats and pulls again
// (nats.js's default 30 s gave ~45 s stalls, 10 s gave the live channel 10 s of silence).
const PULL_EXPIRES_MS = 2_000;
/**
 * A relay's batch goes out as runs of events, one message a run (a JSON array): a consumer takes a
 * run in one delivery and one acknowledgement, and folds it at once where it can. One message an
 * event made every write cost each consumer a delivery and an acknowledged ack (decision 90).
 */
const RUN_EVENTS = 256;
/** a run's bytes at most (the server's max_payload is 1 MB by default); a larger event goes alone */
const RUN_BYTES = 256 * 1024;
/** bytes a request-id header takes at most on the wire (`NATS/1.0`, the name, a 128-character id) */
const HEADER_ROOM = 256;

const streamSubjects = (source: string) => `bindery.evt.${source}.>`;
/** A consumer name may not hold `.`, `*`, `>`, whitespace or path separators. */
const consumerName = (durable: string) => durable.replace(/[^A-Za-z0-9_-]/g, '_');

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private readonly js: JetStreamClient;
  private services: Service[] = [];
  private rpcInflight = new Set<Promise<void>>();
  private subs = new Set<Subscription>();
  private relays = new Map<string, Relay>();
  private consumers = new Set<ConsumerStatus>();
  private closing: Promise<void> | null = null;
  /** subjects whose requests made in one turn of the event loop go as one message (`coalesced`) */
  coalesced: ReadonlySet<string> = new Set();
  private gathering = new Map<string, Gathered[]>();
  /** false between a disconnect and the reconnect */
  connected = true;
  /** copies JetStream keeps of each event stream (NATS_STREAM_REPLICAS; 3 on a 3-server cluster) */
  streamReplicas = 1;
  /** the least gap between a source's relay passes, where it differs from RELAY_MIN_GAP_MS */
  relayGapMs: Readonly<Record<string, number>> = {};

  constructor(
    readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly log: BusLogger,
    private readonly metrics?: Metrics,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {
    this.js = jsm.jetstream();
  }

  // ---- events out: the outbox relay -------------------------------------------------------

  async attachSource(store: EventLog): Promise<void> {
    if (this.relays.has(store.source)) return;
    await this.ensureStream(store.source);
    const source = { source: store.source };
    const m = this.metrics;
    const observe =
      m &&
      ((events: number, seconds: number) => {
        m.relayPass.observe(source, seconds);
        m.relayPassEvents.observe(source, events);
      });
    this.relays.set(store.source, new Relay(store, this, this.log, observe, this.relayGapMs[store.source]));
  }

  /** Idempotent, so replicas may start together. Keeps every event (limits retention, no limits). */
  async ensureStream(source: string): Promise<void> {
    const cfg = {
      name: eventStreamName(source),
      subjects: [streamSubjects(source)],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_msgs: -1,
      max_bytes: -1,
      max_age: 0,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      num_replicas: this.streamReplicas,
    };
    try {
      await this.jsm.streams.add(cfg);
    } catch (e) {
      if (!(e instanceof JetStreamApiError && /already in use/i.test(e.message))) throw e;
      await this.jsm.streams.update(cfg.name, cfg);
    }
  }

  /**
   * Publishes a batch as runs (one message each, concurrently) and resolves once every run is
   * acknowledged (stored or a duplicate), so the relay checkpoint moves only past what JetStream
   * holds. Each run but the first expects its predecessor as the stream's last message id: if one
   * publish fails, the later ones are refused too, and the retried batch cannot land out of position
   * order. A run's id is its first event's and its length: the same run published again is a duplicate.
   */
  readonly publishBatch = async (events: StoredEvent[]): Promise<void> => {
    if (events.length === 0) return;
    const subject = eventRunSubject(events[0]!.source);
    const runs = toRuns(events);
    const publish = (run: Run, after?: string) => this.js.publish(subject, run.body, { msgID: run.id, ...(after ? { expect: { lastMsgID: after } } : {}) });
    const results = await Promise.allSettled(runs.map((run, i) => publish(run, i > 0 ? runs[i - 1]!.id : undefined)));
    const first = results.findIndex((r) => r.status === 'rejected');
    if (first < 0) return;
    const reason = (results[first] as PromiseRejectedResult).reason;
    if (!(reason instanceof JetStreamApiError && reason.code === WRONG_LAST_MSG_ID)) throw reason;
    // The predecessor was acknowledged as a duplicate of an older copy that is not the stream's
    // last message (a republish spanning more than the duplicate window): publish the rest one by one.
    for (const run of runs.slice(first)) await publish(run);
  };

  // ---- events in --------------------------------------------------------------------------

  async consume(opts: ConsumeOptions): Promise<Subscription> {
    const stream = eventStreamName(opts.source);
    const name = consumerName(opts.durable);
    const ctl = new AbortController();
    const wake = new Wake();
    const inbox: JsMsg[] = [];
    let messages: ConsumerMessages | undefined;
    const state: ConsumerStatus = {
      name: opts.durable,
      kind: 'durable',
      source: opts.source,
      running: true,
      busySince: null,
      lag: async () => {
        const info = await this.jsm.consumers.info(stream, name);
        return info.num_pending + info.num_ack_pending;
      },
    };
    opts.parking?.attach(opts.durable, opts.handler);
    const done = (async () => {
      // Everything at or below the consumer's own checkpoint is already applied: ack it unseen.
      const floor = await this.untilOk(`checkpoint of ${name}`, ctl.signal, () => opts.checkpoint());
      if (floor === undefined) return;
      messages = await this.untilOk(`consumer ${name} on ${stream}`, ctl.signal, async () => {
        await this.ensureDurable(stream, name, opts.source);
        const consumer = await this.js.consumers.get(stream, name);
        return consumer.consume({
          max_messages: 16,
          expires: PULL_EXPIRES_MS,
          // Callback mode keeps undelivered messages in our hands, so stop() can give them back at once.
          callback: (m) => {
            if (ctl.signal.aborted) m.nak();
            else {
              inbox.push(m);
              wake.wake();
            }
          },
        });
      });
      if (!messages) return;
      void this.recreateWhenLost(messages, stream, name, opts.source);
      // the last event this replica applied: a redelivered run passes it unseen
      const ran = { through: 0 };
      while (!ctl.signal.aborted) {
        const m = inbox.shift();
        if (m) await this.deliverDurable(m, opts, floor, state, ran);
        else await wake.wait(1_000);
      }
    })().catch((e) => {
      state.running = false;
      this.log.error({ err: e, consumer: name }, 'event consumer stopped on an error');
    });
    const sub: Subscription = {
      stop: async () => {
        ctl.abort();
        wake.wake();
        await done;
        await messages?.close();
        for (const m of inbox.splice(0)) m.nak();
        this.subs.delete(sub);
        this.consumers.delete(state);
      },
    };
    this.subs.add(sub);
    this.consumers.add(state);
    return sub;
  }

  /**
   * One durable pull consumer shared by the replicas; max_ack_pending 1 keeps position order across
   * them. Redelivery stays unbounded on the server: the bus itself parks an event after its last
   * try, so nothing is ever dropped unrecorded.
   */
  private async ensureDurable(stream: string, name: string, source: string): Promise<void> {
    const cfg = {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: streamSubjects(source),
      max_ack_pending: 1,
      max_deliver: -1,
      ack_wait: nanos(ACK_WAIT_MS),
    };
    try {
      await this.jsm.consumers.add(stream, cfg);
    } catch (e) {
      // Servers from 2.10 refuse to create over a differing config: update instead.
      if (!(e instanceof JetStreamApiError && /already (exists|in use)/i.test(e.message))) throw e;
      const { durable_name: _, deliver_policy: __, ...changeable } = cfg;
      await this.jsm.consumers.update(stream, name, changeable);
    }
  }

  /** Pulling goes on by name after the consumer is deleted (a stream restored, an operator's slip): create it again. */
  private async recreateWhenLost(messages: ConsumerMessages, stream: string, name: string, source: string): Promise<void> {
    try {
      for await (const s of messages.status()) {
        if (s.type !== 'consumer_not_found' && s.type !== 'consumer_deleted') continue;
        this.log.warn({ consumer: name, stream, notice: s.type }, 'durable consumer lost; creating it again');
        await this.ensureDurable(stream, name, source).catch((e) => this.log.warn({ err: e, consumer: name }, 'could not create the consumer yet'));
      }
    } catch {
      /* the status feed ends with the subscription */
    }
  }

  private async deliverDurable(m: JsMsg, opts: ConsumeOptions, floor: number, state: ConsumerStatus, ran: { through: number }): Promise<void> {
    const run = this.parse(m);
    if (!run) return m.term('not stored events');
    const started = performance.now();
    // The server counts deliveries of the message, so the tries of its events add up across replicas and restarts.
    const attempt = m.info.deliveryCount;
    const todo = run.filter((ev) => ev.position > floor && ev.position > ran.through && (!opts.types || opts.types.includes(ev.type)));
    if (todo.length > 0) {
      // Busy only while handlers run: between tries the run may go to another replica, and a
      // replica that no longer holds it must not look stuck.
      state.busySince = Date.now();
      const beat = setInterval(() => m.working(), WORKING_EVERY_MS);
      try {
        // after a run the consumer refused, the next AFTER_REFUSED events go one at a time: a refused
        // run may have cost a statement (its condition held), and the next would likely be refused too
        let foldFrom = 0;
        for (let i = 0; i < todo.length; ) {
          const ev = todo[i]!;
          try {
            // several events on a first delivery: the consumer may fold a leading run of them at once
            // (no other replica holds one of them meanwhile: max_ack_pending 1)
            const fold = opts.handleMany && attempt === 1 && i >= foldFrom && todo.length - i > 1;
            const many = fold ? await opts.handleMany!(todo.slice(i)).catch(() => 0) : 0;
            if (fold && many === 0) foldFrom = i + 1 + AFTER_REFUSED;
            if (many > 0) {
              i += Math.min(many, todo.length - i);
              ran.through = todo[i - 1]!.position;
              continue;
            }
            await opts.handler(ev);
          } catch (e) {
            // not parked: the whole run comes again later (what was applied passes unseen then)
            if (!(await handlerFailed({ log: this.log, retry: this.retry, metrics: this.metrics }, opts.durable, opts.parking, ev, e, attempt))) {
              return m.nak(retryDelay(this.retry, attempt));
            }
          }
          ran.through = ev.position;
          i++;
        }
      } finally {
        clearInterval(beat);
        state.busySince = null;
      }
    }
    const applied = performance.now();
    // ackAck: the next run reaches a replica only once the server has this ack.
    await m.ackAck().catch((e) => this.log.warn({ err: e, events: `${run[0]?.id}+${run.length}` }, 'ack not confirmed; the events may come again'));
    this.metrics?.consumerDelivery.observe({ consumer: opts.durable, step: 'apply' }, (applied - started) / 1000);
    this.metrics?.consumerDelivery.observe({ consumer: opts.durable, step: 'ack' }, (performance.now() - applied) / 1000);
  }

  async follow(opts: FollowOptions): Promise<Subscription> {
    const stream = eventStreamName(opts.source);
    const ctl = new AbortController();
    let messages: ConsumerMessages | undefined;
    const state: ConsumerStatus = { name: `follow:${opts.source}`, kind: 'follower', source: opts.source, running: true, busySince: null, lag: async () => null };
    // `now`: the stream's last sequence at this call, so what is published once follow() resolves
    // arrives however long the consumer takes to be made (no stream yet: all of it is new)
    const start = opts.from === 'now' ? await this.startOfNow(stream) : { deliver_policy: DeliverPolicy.All };
    const done = (async () => {
      messages = await this.untilOk(`follower on ${stream}`, ctl.signal, async () => {
        const consumer = await this.js.consumers.get(stream, {
          filter_subjects: streamSubjects(opts.source),
          ...start,
        });
        return consumer.consume({ max_messages: 256, expires: PULL_EXPIRES_MS });
      });
      if (!messages) return;
      if (ctl.signal.aborted) return messages.stop();
      // a run published again (a relay that restarted before its checkpoint moved) passes unseen
      let seen = 0;
      for await (const m of messages) {
        if (ctl.signal.aborted) break;
        for (const ev of this.parse(m) ?? []) {
          if (ctl.signal.aborted) break;
          if (ev.position <= seen) continue;
          seen = ev.position;
          if (opts.types && !opts.types.includes(ev.type)) continue;
          // A read model must not skip an event: retry this one until it applies (loudly, past the retry budget).
          state.busySince = Date.now();
          for (let attempt = 1; !ctl.signal.aborted; attempt++) {
            try {
              await opts.handler(ev);
              break;
            } catch (e) {
              await handlerFailed({ log: this.log, retry: this.retry, metrics: this.metrics }, state.name, undefined, ev, e, attempt);
              await pause(retryDelay(this.retry, attempt), ctl.signal);
            }
          }
          state.busySince = null;
        }
      }
    })().catch((e) => {
      state.running = false;
      this.log.error({ err: e, stream }, 'event follower stopped on an error');
    });
    const sub: Subscription = {
      stop: async () => {
        ctl.abort();
        messages?.stop();
        await done;
        this.subs.delete(sub);
        this.consumers.delete(state);
      },
    };
    this.subs.add(sub);
    this.consumers.add(state);
    return sub;
  }

  /** Where a follower from now starts: after the stream's last message; all of a stream not made yet; by the clock if the stream cannot be read now. */
  private async startOfNow(stream: string) {
    try {
      const last = (await this.jsm.streams.info(stream)).state.last_seq;
      return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: last + 1 };
    } catch (e) {
      if (e instanceof JetStreamApiError && e.code === 10059) return { deliver_policy: DeliverPolicy.All };
      this.log.warn({ err: e, stream }, 'stream position unknown; following from the present time');
      return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date().toISOString() };
    }
  }

  status(): BusStatus {
    return {
      connected: this.connected && !this.nc.isClosed() && this.closing === null,
      consumers: [...this.consumers],
      relayLag: async () =>
        Promise.all(
          [...this.relays.keys()].map(async (source) => {
            const store = this.relays.get(source)!.store;
            return { source, lag: Math.max(0, (await store.headPosition()) - (await store.relayPosition(RELAY))) };
          }),
        ),
    };
  }

  /** A message's events: a run (an array) or, as earlier versions published, one event. */
  private parse(m: JsMsg): StoredEvent[] | null {
    try {
      const body = m.json<StoredEvent | StoredEvent[]>();
      const events = Array.isArray(body) ? body : [body];
      if (events.some((ev) => typeof ev?.position !== 'number')) throw new Error('an event without a position');
      return events;
    } catch (e) {
      this.log.error({ err: e, subject: m.subject, seq: m.seq }, 'unreadable event on the bus');
      return null;
    }
  }

  /** Retries `fn` with backoff until it succeeds (a source not started yet, NATS away) or `signal` aborts. */
  private async untilOk<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        return await fn();
      } catch (e) {
        const waiting = e instanceof JetStreamApiError && e.code === 10059;
        if (attempt === 0 || !waiting) this.log[waiting ? 'info' : 'warn']({ err: waiting ? undefined : e }, waiting ? `${what}: waiting for the stream` : `${what}: retrying`);
        await pause(backoff(attempt, 2_000), signal);
      }
    }
    return undefined;
  }

  // ---- request / reply --------------------------------------------------------------------

  async serve(service: string, handlers: Record<string, RpcHandler>): Promise<void> {
    const srv = await new Svcm(this.nc).add({ name: `bindery-${service}`, version: '1.0.0', queue: service });
    this.services.push(srv);
    for (const [op, handler] of Object.entries(handlers)) {
      const subject = rpcSubject(service, op);
      const name = op.replace(/[^-\w]/g, '_');
      // each request alone, and several in one message (decision 99)
      for (const [endpoint, on, answer] of [
        [name, subject, this.answer],
        [`${name}_many`, manySubject(subject), this.answerMany],
      ] as const) {
        srv.addEndpoint(endpoint, {
          subject: on,
          queue: service,
          handler: (e, msg) => {
            if (e) return this.log.error({ err: e, subject }, 'rpc endpoint failed');
            const p = answer.call(this, subject, handler, msg);
            this.rpcInflight.add(p);
            void p.finally(() => this.rpcInflight.delete(p));
          },
        });
      }
    }
    // serve() resolves once the server has the subscriptions: a request sent right after finds them.
    await this.nc.flush();
  }

  private answer(subject: string, handler: RpcHandler, msg: ServiceMsg): Promise<void> {
    // The caller's request id arrives as a header: everything the handler logs carries it.
    const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
    return withRequestId(requestId, async () => {
      msg.respond(JSON.stringify(await this.handle(subject, handler, msg.data.length ? msg.json() : null)));
      this.log.debug({ subject }, 'rpc handled');
    });
  }

  /** One request's handler; what it threw becomes an `internal` failure. */
  private async handle(subject: string, handler: RpcHandler, body: unknown): Promise<unknown> {
    const done = this.metrics?.rpcTimer('server', subject);
    try {
      const result = await handler(body);
      done?.(rpcOutcomeOf(result));
      return result === undefined ? null : result;
    } catch (e) {
      done?.('error');
      this.log.error({ err: e, subject }, 'rpc handler threw');
      return err(fail('internal', messageOf(e)));
    }
  }

  /** Several requests in one message (`coalesced`): each handled as if it came alone, the answers in their order. */
  private async answerMany(subject: string, handler: RpcHandler, msg: ServiceMsg): Promise<void> {
    let many: Many[];
    try {
      many = msg.json<Many[]>();
      if (!Array.isArray(many)) throw new Error('not a list');
    } catch (e) {
      msg.respond(JSON.stringify(err(fail('invalid_request', `a batch of requests must be a list: ${messageOf(e)}`))));
      return;
    }
    const results = await Promise.all(
      many.map((m) =>
        // each request's id, as its header would have brought it
        withRequestId(typeof m?.id === 'string' ? m.id : undefined, async () => {
          const result = await this.handle(subject, handler, m?.body ?? null);
          this.log.debug({ subject }, 'rpc handled');
          return result;
        }),
      ),
    );
    let reply = JSON.stringify(results);
    // carried events are a shortcut (the read models hear of them over the bus anyway): a batch's
    // answer too large for one message goes without them
    if (Buffer.byteLength(reply) > (this.nc.info?.max_payload ?? Infinity) - HEADER_ROOM) reply = JSON.stringify(results.map(withoutCarried));
    msg.respond(reply);
  }

  async request(subject: string, body: unknown, timeoutMs = 10_000): Promise<unknown> {
    if (this.coalesced.has(subject) && !this.closing) return this.gather(subject, body, timeoutMs);
    return this.single(subject, JSON.stringify(body ?? null), timeoutMs, currentRequestId());
  }

  /**
   * Holds a request for `subject` until this turn of the event loop ends, then sends the turn's
   * requests as one message to `<subject>.many` (decision 99). Each caller gets its own answer, as
   * if its request had gone alone.
   */
  private gather(subject: string, body: unknown, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const g: Gathered = { body: JSON.stringify(body ?? null), timeoutMs, requestId: currentRequestId(), done: this.metrics?.rpcTimer('client', subject), resolve, reject };
      const list = this.gathering.get(subject);
      if (list) return void list.push(g);
      this.gathering.set(subject, [g]);
      setImmediate(() => {
        const all = this.gathering.get(subject) ?? [];
        this.gathering.delete(subject);
        // a message holds at most MANY_MAX requests and half of what the server takes in one message
        const room = ((this.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM) / 2;
        let part: Gathered[] = [];
        let bytes = 0;
        for (const x of all) {
          if (part.length > 0 && (part.length >= MANY_MAX || bytes + x.body.length > room)) {
            void this.sendMany(subject, part);
            part = [];
            bytes = 0;
          }
          part.push(x);
          bytes += x.body.length + 64;
        }
        if (part.length) void this.sendMany(subject, part);
      });
    });
  }

  private async sendMany(subject: string, list: Gathered[]): Promise<void> {
    const alone = (g: Gathered) => this.single(subject, g.body, g.timeoutMs, g.requestId, g.done).then(g.resolve, g.reject);
    if (list.length === 1) return alone(list[0]!);
    const data = `[${list.map((g) => `{"id":${JSON.stringify(g.requestId ?? null)},"body":${g.body}}`).join(',')}]`;
    const timeoutMs = Math.max(...list.map((g) => g.timeoutMs));
    let replies: unknown;
    try {
      replies = (await this.nc.request(manySubject(subject), data, { timeout: timeoutMs })).json();
    } catch (e) {
      // served only by processes that take requests one by one (a rolling update): each goes alone
      if (isNoResponders(e)) return void (await Promise.all(list.map(alone)));
      const failure = this.rpcFailure(e, subject, timeoutMs);
      for (const g of list) {
        g.done?.(failure instanceof RpcUnavailableError ? 'unavailable' : 'error');
        g.reject(failure);
      }
      return;
    }
    for (const [k, g] of list.entries()) {
      // a server refuses a batch it cannot read with one failure, which then answers each request
      const reply = Array.isArray(replies) ? (replies[k] ?? null) : replies;
      g.done?.(rpcOutcomeOf(reply));
      g.resolve(reply);
    }
  }

  /** One request in a message of its own; `data` is its body as JSON. */
  private async single(subject: string, data: string, timeoutMs: number, requestId: string | undefined, done = this.metrics?.rpcTimer('client', subject)): Promise<unknown> {
    // Headers count against the server's max_payload: a body the gateway accepted must not fail
    // for want of room for its request id, so a body that close to the limit goes without it.
    const room = (this.nc.info?.max_payload ?? Infinity) - HEADER_ROOM;
    const h = requestId && Buffer.byteLength(data) <= room ? headers() : undefined;
    h?.set(REQUEST_ID_HEADER, requestId!);
    try {
      const m = await this.nc.request(subject, data, { timeout: timeoutMs, ...(h ? { headers: h } : {}) });
      const reply = m.data.length ? m.json() : null;
      done?.(rpcOutcomeOf(reply));
      return reply;
    } catch (e) {
      const failure = this.rpcFailure(e, subject, timeoutMs);
      done?.(failure instanceof RpcUnavailableError ? 'unavailable' : 'error');
      throw failure;
    }
  }

  /** A request's failure as the caller sees it: RpcUnavailableError where no service could answer. */
  private rpcFailure(e: unknown, subject: string, timeoutMs: number): unknown {
    if (isNoResponders(e)) return new RpcUnavailableError(subject, 'no responders');
    if (e instanceof TimeoutError) return new RpcUnavailableError(subject, `no reply within ${timeoutMs} ms`);
    if (e instanceof ClosedConnectionError || e instanceof DrainingConnectionError) return new RpcUnavailableError(subject, 'bus closed');
    return e;
  }

  // ---- shutdown ---------------------------------------------------------------------------

  /** Stops serving (in-flight requests finish), then consuming, then the relays after a last flush. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.allSettled(this.services.map((s) => s.stop()));
      await Promise.allSettled([...this.rpcInflight]);
      await Promise.allSettled([...this.subs].map((s) => s.stop()));
      await Promise.allSettled([...this.relays.values()].map((r) => r.stop()));
      if (!this.nc.isClosed()) await this.nc.drain().catch((e) => this.log.warn({ err: e }, 'nats drain failed'));
    })();
    return this.closing;
  }

  // ---- transient messages: NATS core publish/subscribe, no JetStream ------------------------

  notify(subject: string, data: unknown): void {
    if (this.closing || this.nc.isClosed()) return;
    try {
      this.nc.publish(subject, JSON.stringify(data ?? null));
    } catch (e) {
      this.log.debug({ err: e, subject }, 'transient message dropped');
    }
  }

  async listen(subject: string, handler: Parameters<Bus['listen']>[1]): Promise<Subscription> {
    // no queue group: every listening instance receives every message
    const sub = this.nc.subscribe(subject, {
      callback: (e, msg) => {
        if (e) return this.log.warn({ err: e, subject }, 'transient subscription failed');
        let data: unknown;
        try {
          data = msg.data.length ? msg.json() : null;
        } catch (err) {
          return this.log.warn({ err, subject: msg.subject }, 'unreadable transient message');
        }
        void Promise.resolve()
          .then(() => handler(data, msg.subject))
          .catch((err: unknown) => this.log.warn({ err, subject: msg.subject }, 'transient handler failed'));
      },
    });
    await this.nc.flush();
    return {
      stop: async () => {
        if (!sub.isClosed()) sub.unsubscribe();
      },
    };
  }
}

interface Run {
  id: string;
  body: string;
}

/** Cuts a batch into runs of at most RUN_EVENTS events and RUN_BYTES bytes (a larger event alone), in order. */
function toRuns(events: StoredEvent[]): Run[] {
  const runs: Run[] = [];
  let parts: string[] = [];
  let first: StoredEvent | null = null;
  let bytes = 0;
  const close = () => {
    if (first) runs.push({ id: `${first.id}+${parts.length}`, body: `[${parts.join(',')}]` });
    parts = [];
    first = null;
    bytes = 0;
  };
  for (const ev of events) {
    const json = JSON.stringify(ev);
    if (parts.length >= RUN_EVENTS || (parts.length > 0 && bytes + json.length > RUN_BYTES)) close();
    first ??= ev;
    parts.push(json);
    bytes += json.length + 1;
  }
  close();
  return runs;
}

const isNoResponders = (e: unknown) => e instanceof NoRespondersError || (e instanceof RequestError && e.isNoResponders());

/** the most requests one message carries (`coalesced`) */
const MANY_MAX = 32;
/** where several requests for `subject` go in one message */
const manySubject = (subject: string) => `${subject}.many`;
/** a request waiting for the end of the turn (`coalesced`) */
interface Gathered {
  /** the request's body as JSON */
  body: string;
  timeoutMs: number;
  requestId: string | undefined;
  /** its RPC timing, from when it was asked */
  done: ((outcome: RpcOutcome) => void) | undefined;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}
/** an answer without the events its `written` carries (write-position.ts) */
function withoutCarried(result: unknown): unknown {
  const w = (result as { written?: { events?: unknown } } | null)?.written;
  if (!w || typeof w !== 'object' || !('events' in w)) return result;
  const { events: _events, ...written } = w;
  return { ...(result as object), written };
}

/** one request of a message that carries several */
interface Many {
  id: string | null;
  body: unknown;
}

export interface NatsBusOptions {
  /** connection name shown by the server */
  name?: string;
  logger?: BusLogger;
  metrics?: Metrics;
  retry?: RetryPolicy;
  /** this process's own NATS user: a user and password, or a .creds file (JWT and nkey seed) */
  auth?: { user: string; pass: string } | { credsFile: string };
  /** copies JetStream keeps of each event stream (3 on a 3-node cluster) */
  streamReplicas?: number;
  /** reply subjects of this process (e.g. `_INBOX.catalog`), so NATS permissions keep other services' replies out of reach */
  inboxPrefix?: string;
  /**
   * The least time between two relay passes that found events, by source (RELAY_MIN_GAP_MS
   * otherwise): a source whose answers carry their events to the gateway (trackingWrites' `carry`)
   * is waited for by no answer, and its relay takes longer runs (decision 98)
   */
  relayGapMs?: Readonly<Record<string, number>>;
  /** request subjects whose requests made in one turn of the event loop go as one message */
  coalesce?: readonly string[];
}

export async function connectNatsBus(url: string, opts: NatsBusOptions = {}): Promise<NatsBus> {
  const log = opts.logger ?? createLogger('bus');
  const auth = opts.auth;
  const nc = await connect({
    servers: url.split(',').map((s) => s.trim()),
    ...(opts.name ? { name: opts.name } : {}),
    ...(opts.inboxPrefix ? { inboxPrefix: opts.inboxPrefix } : {}),
    ...(auth && 'user' in auth ? { user: auth.user, pass: auth.pass } : {}),
    // read on every (re)connect, so a rotated file is picked up without a restart
    ...(auth && 'credsFile' in auth ? { authenticator: credsAuthenticator(() => readFileSync(auth.credsFile)) } : {}),
    maxReconnectAttempts: -1,
    // errors become RpcUnavailableError; stack traces captured per request are never shown
    noAsyncTraces: true,
  });
  let bus: NatsBus;
  try {
    bus = new NatsBus(nc, await jetstreamManager(nc), log, opts.metrics, opts.retry);
    bus.streamReplicas = opts.streamReplicas ?? 1;
    bus.relayGapMs = opts.relayGapMs ?? {};
    bus.coalesced = new Set(opts.coalesce ?? []);
  } catch (e) {
    await nc.close();
    throw e;
  }
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') log.warn({ status: s.type }, `nats ${s.type}`);
      if (s.type === 'disconnect') bus.connected = false;
      if (s.type === 'reconnect') bus.connected = true;
    }
  })().catch(() => undefined);
  return bus;
}
