// Process lifecycle: start services in order, stop them in reverse on SIGTERM/SIGINT with a deadline.
import type { Logger } from './logger';
import type { RunningService } from './running-service';

export interface Host {
  stop(reason?: string): Promise<void>;
}

export function hostProcess(log: Logger, services: RunningService[], closeAll: () => Promise<void>, timeoutMs: number): Host {
  let stopping: Promise<void> | null = null;
  const stop = (reason = 'stop') => {
    stopping ??= (async () => {
      log.info({ reason }, 'stopping');
      const deadline = setTimeout(() => {
        log.error({ timeoutMs }, 'graceful stop timed out; exiting');
        process.exit(1);
      }, timeoutMs);
      deadline.unref();
      for (const s of [...services].reverse()) {
        try {
          await s.stop();
        } catch (e) {
          log.error({ err: e, service: s.name }, 'service stop failed');
        }
      }
      await closeAll();
      clearTimeout(deadline);
      log.info('stopped');
    })();
    return stopping;
  };
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.once(sig, () => void stop(sig).then(() => process.exit(0)));
  }
  return { stop };
}
