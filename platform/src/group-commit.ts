// Group commit: commands that arrive while one transaction runs wait for it, then go together in the
// next one. One request alone goes at once and alone, so a quiet server pays nothing for it; under
// load a transaction carries many, and the statements, round trips and commits per command fall.
import type { StoredEvent } from '@bindery/contracts';
import { capturingPosition, noteCommitted, notePosition } from './write-position';

export interface GroupCommitOptions<J, R> {
  /** runs a batch of jobs (at least two, each key once) in one transaction: a result per job, in order */
  many: (jobs: J[]) => Promise<R[]>;
  /** runs one job on its own: a batch of one, and each job of a batch that failed */
  alone: (job: J) => Promise<R>;
  /** jobs with the same key never share a batch (the later waits for the next) */
  key: (job: J) => string;
  /** the most jobs in one batch */
  max?: number;
  /** told of each batch once it settled: how many jobs it carried and how long it took, in seconds */
  observe?: (jobs: number, seconds: number) => void;
  /**
   * The events of a batch that are the job's own. Given, a caller's request notes only its own
   * events and waits for the last of them (not the batch's last position); without, every caller
   * notes the whole batch.
   */
  own?: (job: J, events: readonly StoredEvent[]) => StoredEvent[];
}

/** at most this many more turns of the event loop while jobs keep coming */
const LINGER_TURNS = 4;

interface Settled<R> {
  value: R;
  position: number;
  events: readonly StoredEvent[];
}

interface Waiting<J, R> {
  job: J;
  settle: (r: Settled<R>) => void;
  fail: (e: unknown) => void;
}

/**
 * One batch runs at a time; each job's caller gets its own result or error. The log positions a
 * batch appended are noted for each caller's request (read your writes: write-position.ts), as if
 * the caller had appended them itself.
 */
export class GroupCommit<J, R> {
  private waiting: Waiting<J, R>[] = [];
  private busy = false;
  private readonly max: number;

  constructor(private readonly o: GroupCommitOptions<J, R>) {
    this.max = o.max ?? 64;
  }

  async submit(job: J): Promise<R> {
    const { value, position, events } = await new Promise<Settled<R>>((settle, fail) => {
      this.waiting.push({ job, settle, fail });
      this.pump();
    });
    if (position > 0) notePosition(position);
    noteCommitted(events);
    return value;
  }

  private pump(): void {
    if (this.busy || this.waiting.length === 0) return;
    this.busy = true;
    // a turn of the event loop first: requests whose bytes have come in reach `submit` and join this
    // batch (embedded PGlite answers on this thread without one, so a transaction would otherwise
    // start before any other request was even read)
    this.linger(0, this.waiting.length);
  }

  /**
   * Starts the batch after this turn of the event loop, or a few more while each turn brought more
   * jobs (answers of the last batch going out, their next requests coming in): a job alone waits
   * one turn; under load batches grow (decision 86).
   */
  private linger(turns: number, seen: number): void {
    setImmediate(() => {
      const now = this.waiting.length;
      if (now > seen && now < this.max && turns < LINGER_TURNS) this.linger(turns + 1, now);
      else this.start();
    });
  }

  private start(): void {
    const batch = this.take();
    const t0 = performance.now();
    void this.run(batch).finally(() => {
      this.o.observe?.(batch.length, (performance.now() - t0) / 1000);
      this.busy = false;
      this.pump();
    });
  }

  /** The waiting jobs in arrival order, each key once, at most `max`; the rest wait. */
  private take(): Waiting<J, R>[] {
    const keys = new Set<string>();
    const batch: Waiting<J, R>[] = [];
    const rest: Waiting<J, R>[] = [];
    for (const w of this.waiting) {
      const k = this.o.key(w.job);
      if (batch.length < this.max && !keys.has(k)) {
        keys.add(k);
        batch.push(w);
      } else rest.push(w);
    }
    this.waiting = rest;
    return batch;
  }

  private async run(batch: Waiting<J, R>[]): Promise<void> {
    if (batch.length > 1) {
      let done: { value: R[]; position: number; events: StoredEvent[] } | null = null;
      try {
        done = await capturingPosition(() => this.o.many(batch.map((w) => w.job)));
      } catch {
        // one job's failure fails the whole transaction: each goes again on its own, below, and
        // its own outcome (its own error, if it is the one) goes to its caller
      }
      if (done) {
        for (const [i, w] of batch.entries()) w.settle(this.share(w.job, done.value[i]!, done.position, done.events));
        return;
      }
    }
    for (const w of batch) {
      await capturingPosition(() => this.o.alone(w.job)).then((r) => w.settle(this.share(w.job, r.value, r.position, r.events)), w.fail);
    }
  }

  /** A job's part of what its batch appended: its own events and their last position (`own`), or all of it. */
  private share(job: J, value: R, position: number, events: readonly StoredEvent[]): Settled<R> {
    if (!this.o.own) return { value, position, events };
    const mine = this.o.own(job, events);
    // none of its own among the carried events (it wrote nothing, or the batch carried none): the batch's position
    return { value, position: mine.length ? mine[mine.length - 1]!.position : position, events: mine };
  }
}
