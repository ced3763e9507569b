// The outbox relay's pacing: an idle relay publishes an append at once; under a stream of appends a
// pass waits the least gap after the last pass that found events, its source's own where set
// (decision 98). A stand-in log and target: the relay's timing is what is under test, not storage.
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '@bindery/contracts';
import { Relay, RELAY_MIN_GAP_MS } from '../src/bus/nats-relay';
import type { EventLog } from '../src/bus/types';

function log() {
  const pending: StoredEvent[] = [];
  const listeners = new Set<() => void>();
  let position = 0;
  const store = {
    source: 'paced',
    relayOnce: async (_name: string, publish: (events: StoredEvent[]) => Promise<void>) => {
      const run = pending.splice(0);
      if (run.length) await publish(run);
      return run.length;
    },
    onAppend: (l: () => void) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as EventLog;
  const append = () => {
    position++;
    pending.push({
      id: `e${position}`,
      type: 't.a.v1',
      source: 'paced',
      streamId: 's',
      version: position - 1,
      position,
      data: {},
      metadata: {},
      recordedAt: new Date().toISOString(),
    });
    for (const l of listeners) l();
  };
  return { store, append };
}

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

async function passes(gapMs: number): Promise<number[]> {
  const { store, append } = log();
  const at: number[] = [];
  const t0 = performance.now();
  const relay = new Relay(store, { ensureStream: async () => undefined, publishBatch: async () => void at.push(performance.now() - t0) }, quiet, undefined, gapMs);
  append();
  await new Promise((r) => setTimeout(r, 20));
  append();
  await new Promise((r) => setTimeout(r, 5));
  append();
  await new Promise((r) => setTimeout(r, gapMs + 100));
  await relay.stop();
  return at;
}

describe('outbox relay pacing', () => {
  it('publishes an append at once, then waits its source’s least gap after a pass that found events', async () => {
    const paced = await passes(120);
    // the first alone; the two appends after it (20 and 25 ms on) in one pass, no sooner than the
    // gap after the first (with the default gap they would be two passes)
    expect(paced).toHaveLength(2);
    expect(paced[1]! - paced[0]!).toBeGreaterThanOrEqual(115);
    expect(RELAY_MIN_GAP_MS).toBeLessThan(115);
  });
});
