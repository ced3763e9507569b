// The login lock policy, keyed on the submitted login string. Pure: the store keeps the row.

export interface AttemptRow {
  failures: number;
  first_failed_at: Date | null;
  locked_until: Date | null;
}

export interface LockPolicy {
  maxAttempts: number;
  lockMinutes: number;
}

/** Whole remaining minutes plus one, as the spec's lock message counts them. */
export function remainingMinutes(lockedUntil: Date, now: Date): number {
  return Math.floor((lockedUntil.getTime() - now.getTime()) / 60000) + 1;
}

export function activeLock(row: AttemptRow | null, now: Date): Date | null {
  return row?.locked_until && row.locked_until.getTime() > now.getTime() ? row.locked_until : null;
}

/**
 * The row after one more failure. Failures older than the lock window, or from before an
 * expired lock, no longer count.
 */
export function afterFailure(row: AttemptRow | null, now: Date, p: LockPolicy): { failures: number; first_failed_at: Date; locked_until: Date | null; lockedNow: boolean } {
  const windowMs = p.lockMinutes * 60000;
  const expired = row?.locked_until != null && row.locked_until.getTime() <= now.getTime();
  const counting = row?.first_failed_at && !expired && now.getTime() - row.first_failed_at.getTime() <= windowMs ? { failures: row.failures, since: row.first_failed_at } : null;
  const failures = (counting?.failures ?? 0) + 1;
  const first = counting?.since ?? now;
  if (failures >= p.maxAttempts) return { failures, first_failed_at: first, locked_until: new Date(now.getTime() + windowMs), lockedNow: true };
  return { failures, first_failed_at: first, locked_until: null, lockedNow: false };
}
