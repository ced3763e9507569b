// What a JetStream event stream holds, counted in events: the relay publishes a run of events as
// one message (a JSON array), and earlier versions one event a message.
import { DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** The events of `stream`'s messages, in order (0 when the stream does not exist yet). */
export async function streamEventCount(nc: NatsConnection, stream: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream).catch(() => null);
  const messages = info?.state.messages ?? 0;
  if (messages === 0) return 0;
  const reader = await jsm.jetstream().consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  let events = 0;
  try {
    const batch = await reader.fetch({ max_messages: messages, expires: 5_000 });
    let seen = 0;
    for await (const m of batch) {
      const body = m.json<unknown>();
      events += Array.isArray(body) ? body.length : 1;
      if (++seen >= messages) break;
    }
  } finally {
    await reader.delete().catch(() => undefined);
  }
  return events;
}
