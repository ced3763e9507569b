// Backoff and abortable pauses for the buses' retry loops.
import type { RetryPolicy } from './types';

export const backoff = (attempt: number, cap = 5_000) => Math.min(100 * 2 ** Math.min(attempt, 16), cap);

/** The wait after failed try number `attempt` (1-based) of an event handler. */
export const retryDelay = (p: RetryPolicy, attempt: number) => Math.min(p.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 20), p.maxMs);

/** How long all the tries of one event take at most, waits included (handler time aside). */
export function retryBudgetMs(p: RetryPolicy): number {
  let total = 0;
  for (let attempt = 1; attempt < p.attempts; attempt++) total += retryDelay(p, attempt);
  return total;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
