import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/group-commit';
import type { StoredEvent } from '@bindery/contracts';
import { noteCommitted, notePosition, withWritePosition, type Written } from '../src/write-position';

interface Job {
  user: string;
  n: number;
  fails?: boolean;
}

/** A group commit whose transactions are recorded; each job "appends" position 100 + n. */
function recorder(max?: number, observe?: (jobs: number, seconds: number) => void) {
  const batches: number[][] = [];
  let release: (() => void) | null = null;
  const g = new GroupCommit<Job, string>({
    ...(max ? { max } : {}),
    ...(observe ? { observe } : {}),
    key: (j) => j.user,
    many: async (jobs) => {
      batches.push(jobs.map((j) => j.n));
      if (jobs.some((j) => j.fails)) throw new Error('the batch failed');
      for (const j of jobs) notePosition(100 + j.n);
      return jobs.map((j) => `many ${j.n}`);
    },
    alone: async (j) => {
      batches.push([j.n]);
      // the first job holds its transaction until the test lets it go
      if (j.n === 0) await new Promise<void>((r) => (release = r));
      if (j.fails) throw new Error(`job ${j.n} failed`);
      notePosition(100 + j.n);
      return `alone ${j.n}`;
    },
  });
  return { g, batches, release: () => release?.() };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('GroupCommit', () => {
  it('runs a job alone at once, and the jobs that came while it ran together in the next', async () => {
    const { g, batches, release } = recorder();
    const first = g.submit({ user: 'a', n: 0 });
    await tick();
    const rest = [1, 2, 3].map((n) => g.submit({ user: `u${n}`, n }));
    await tick();
    expect(batches).toEqual([[0]]);
    release();
    expect(await first).toBe('alone 0');
    expect(await Promise.all(rest)).toEqual(['many 1', 'many 2', 'many 3']);
    expect(batches).toEqual([[0], [1, 2, 3]]);
  });

  it('waits while each turn of the event loop brings more jobs (a few turns at most), then takes them together', async () => {
    const { g, batches } = recorder();
    // two jobs in the first turn, then one a turn: the batch lingers for them, four turns more at most
    const jobs = [g.submit({ user: 'u1', n: 1 }), g.submit({ user: 'u2', n: 2 })];
    for (let n = 3; n <= 9; n++) {
      await tick();
      jobs.push(g.submit({ user: `u${n}`, n }));
    }
    await Promise.all(jobs);
    expect(batches[0]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // a job alone waits one turn only
    const before = batches.length;
    const alone = g.submit({ user: 'solo', n: 10 });
    await tick();
    const late = g.submit({ user: 'late', n: 11 });
    expect(await alone).toBe('alone 10');
    expect(await late).toBe('alone 11');
    expect(batches.slice(before)).toEqual([[10], [11]]);
  });

  it('tells `observe` of each batch once it settled: the jobs it carried and the seconds it took', async () => {
    const seen: { jobs: number; seconds: number }[] = [];
    const { g, release } = recorder(undefined, (jobs, seconds) => seen.push({ jobs, seconds }));
    const first = g.submit({ user: 'a', n: 0 });
    await tick();
    const rest = [1, 2, 3].map((n) => g.submit({ user: `u${n}`, n }));
    await new Promise((r) => setTimeout(r, 30));
    // the first batch still holds its transaction: nothing settled yet
    expect(seen).toEqual([]);
    release();
    await first;
    await Promise.all(rest);
    expect(seen.map((s) => s.jobs)).toEqual([1, 3]);
    expect(seen[0]!.seconds).toBeGreaterThanOrEqual(0.025);
    expect(seen[1]!.seconds).toBeGreaterThanOrEqual(0);
  });

  it('never puts two jobs of one key in a batch, and takes at most `max`', async () => {
    const { g, batches, release } = recorder(2);
    const first = g.submit({ user: 'a', n: 0 });
    await tick();
    const rest = [g.submit({ user: 'b', n: 1 }), g.submit({ user: 'b', n: 2 }), g.submit({ user: 'c', n: 3 }), g.submit({ user: 'd', n: 4 })];
    release();
    await first;
    expect(await Promise.all(rest)).toEqual(['many 1', 'many 2', 'many 3', 'many 4']);
    expect(batches).toEqual([[0], [1, 3], [2, 4]]);
  });

  it("runs each job of a failed batch alone: the failing job's error goes to its caller only", async () => {
    const { g, batches, release } = recorder();
    const first = g.submit({ user: 'a', n: 0 });
    await tick();
    const ok1 = g.submit({ user: 'b', n: 1 });
    const bad = g.submit({ user: 'c', n: 2, fails: true }).catch((e: Error) => e.message);
    const ok3 = g.submit({ user: 'd', n: 3 });
    release();
    await first;
    expect(await Promise.all([ok1, bad, ok3])).toEqual(['alone 1', 'job 2 failed', 'alone 3']);
    expect(batches).toEqual([[0], [1, 2, 3], [1], [2], [3]]);
  });

  it("notes the batch's log position in each caller's request, as its own write", async () => {
    const { g, release } = recorder();
    const first = withWritePosition('svc', async () => ({ r: await g.submit({ user: 'a', n: 0 }) }));
    await tick();
    const second = withWritePosition('svc', async () => ({ r: await g.submit({ user: 'b', n: 5 }) }));
    const third = withWritePosition('svc', async () => ({ r: await g.submit({ user: 'c', n: 7 }) }));
    const untouched = withWritePosition('svc', async () => ({ r: 'no write' }));
    release();
    expect(await first).toEqual({ r: 'alone 0', written: { source: 'svc', position: 100 } });
    // both in one transaction: each waits for the transaction's last position
    expect(await second).toEqual({ r: 'many 5', written: { source: 'svc', position: 107 } });
    expect(await third).toEqual({ r: 'many 7', written: { source: 'svc', position: 107 } });
    expect(await untouched).toEqual({ r: 'no write' });
  });

  it("with `own`, each caller carries its own share of the batch's committed events and waits for the last of them", async () => {
    const stored = (user: string, position: number): StoredEvent => ({
      id: `e${position}`,
      type: 't.saved.v1',
      source: 'svc',
      streamId: `user:${user}`,
      version: 0,
      position,
      data: {},
      metadata: {},
      recordedAt: '2026-11-29T00:00:00.000Z',
    });
    let hold: (() => void) | null = null;
    const g = new GroupCommit<Job, string>({
      key: (j) => j.user,
      own: (j, events) => events.filter((e) => e.streamId === `user:${j.user}`),
      many: async (jobs) => {
        // one transaction: each job's event in order, committed together; 'quiet' writes nothing
        const evs = jobs.filter((j) => j.user !== 'quiet').map((j) => stored(j.user, 200 + j.n));
        for (const e of evs) notePosition(e.position);
        noteCommitted(evs);
        return jobs.map((j) => `many ${j.n}`);
      },
      alone: async (j) => {
        if (j.n === 0) await new Promise<void>((r) => (hold = r));
        notePosition(200 + j.n);
        noteCommitted([stored(j.user, 200 + j.n)]);
        return `alone ${j.n}`;
      },
    });
    const run = (job: Job) => withWritePosition('svc', async () => ({ r: await g.submit(job) }), true) as Promise<{ r: string; written?: Written }>;
    const first = run({ user: 'a', n: 0 });
    await tick();
    const b = run({ user: 'b', n: 1 });
    const c = run({ user: 'c', n: 2 });
    const quiet = run({ user: 'quiet', n: 3 });
    hold!();
    expect((await first).written).toEqual({ source: 'svc', position: 200, events: [stored('a', 200)] });
    // one batch: each answer carries its own event only, and waits for that position, not the batch's last
    expect((await b).written).toEqual({ source: 'svc', position: 201, events: [stored('b', 201)] });
    expect((await c).written).toEqual({ source: 'svc', position: 202, events: [stored('c', 202)] });
    // a job that appended nothing of its own waits for the batch's last position, and carries nothing
    expect((await quiet).written).toEqual({ source: 'svc', position: 202 });
    // without `own` (the test above) every caller waits for the batch's last position
  });
});
