// The envelope every event travels in, on the bus and out of a store.

export interface StoredEvent<T = unknown> {
  /** the event id (UUID); also the JetStream Nats-Msg-Id */
  id: string;
  /** `<context>.<name>.v<N>` */
  type: string;
  /** the owning service's name: which store and JetStream stream it lives in */
  source: string;
  streamId: string;
  version: number;
  /** global position in the source service's log; strictly increasing in delivery order */
  position: number;
  data: T;
  metadata: Record<string, unknown>;
  recordedAt: string;
}

export interface NewEvent<T = unknown> {
  type: string;
  data: T;
  metadata?: Record<string, unknown>;
}

export const eventSubject = (source: string, type: string) => `bindery.evt.${source}.${type}`;
/** Where a run of a source's events goes as one message: a JSON array of them, in position order (the relay's publish). */
export const eventRunSubject = (source: string) => `bindery.evt.${source}.run`;
export const eventStreamName = (source: string) => `BINDERY_${source.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
export const rpcSubject = (service: string, op: string) => `bindery.rpc.${service}.${op}`;
