// Backoff and abortable pauses for the NATS adapter's retry loops.

export const backoff = (attempt: number, cap = 5_000) => Math.min(100 * 2 ** Math.min(attempt, 16), cap);

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

