// JetStream's Bindery streams (BINDERY_<SOURCE>) as they are now: what a backup records beside the
// logs, and what a restore checks is empty.
import { readFileSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { eventStreamName } from '@bindery/contracts';
import { SERVICE_SCHEMAS } from './snapshot';

export interface NatsAccess {
  url: string;
  user?: string;
  pass?: string;
  credsFile?: string;
}

export async function binderyStreams(o: NatsAccess): Promise<Record<string, { messages: number; last_seq: number }>> {
  const nc = await connect({
    servers: o.url.split(',').map((s) => s.trim()),
    name: 'bindery-backup',
    ...(o.user ? { user: o.user, pass: o.pass ?? '' } : {}),
    ...(o.credsFile ? { authenticator: credsAuthenticator(readFileSync(o.credsFile)) } : {}),
    maxReconnectAttempts: 0,
  });
  try {
    const jsm = await jetstreamManager(nc);
    const out: Record<string, { messages: number; last_seq: number }> = {};
    for (const { schema } of SERVICE_SCHEMAS) {
      if (schema === 'gateway') continue;
      const name = eventStreamName(schema);
      try {
        const info = await jsm.streams.info(name);
        out[name] = { messages: info.state.messages, last_seq: info.state.last_seq };
      } catch {
        // no such stream: nothing held
      }
    }
    return out;
  } finally {
    await nc.close();
  }
}
