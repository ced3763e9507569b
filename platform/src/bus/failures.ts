// What both buses do when an event handler throws: retry with backoff a bounded number of times,
// then park the event with its error and move on. Never silent: every failure is logged and counted.
import type { StoredEvent } from '@bindery/contracts';
import type { Logger } from '../logger';
import type { Metrics } from '../metrics';
import { retryDelay } from './retry';
import type { Parking, RetryPolicy } from './types';

export type BusLogger = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

export interface FailureDeps {
  log: BusLogger;
  retry: RetryPolicy;
  metrics?: Metrics;
}

export const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Try number `attempt` (1-based) of `ev` by `consumer` failed with `e`. Resolves true once the
 * event is parked (the consumer moves on), false when it is to be tried again after `retryDelay`.
 */
export async function handlerFailed(d: FailureDeps, consumer: string, parking: Parking | undefined, ev: StoredEvent, e: unknown, attempt: number): Promise<boolean> {
  d.metrics?.handlerFailures.inc({ consumer });
  const at = { consumer, event: ev.id, type: ev.type, position: ev.position, attempt };
  if (attempt < d.retry.attempts) {
    d.log.warn({ ...at, err: e, retryInMs: retryDelay(d.retry, attempt) }, 'event handler failed; retrying');
    return false;
  }
  if (!parking) {
    d.log.error({ ...at, err: e, retryInMs: retryDelay(d.retry, attempt) }, 'event handler keeps failing and this consumer has no parking; retrying');
    return false;
  }
  try {
    await parking.park(consumer, ev, messageOf(e), attempt);
  } catch (pe) {
    d.log.error({ ...at, err: pe, handlerError: messageOf(e) }, 'could not park a failing event; retrying');
    return false;
  }
  d.metrics?.eventsParked.inc({ consumer });
  d.log.error({ ...at, err: e }, 'event parked after repeated failures; the consumer moves on (replay it once fixed)');
  return true;
}
