// Why a running scan was cut short: none of these is a failure of the scan itself.
export type StopReason = 'deleted' | 'lease' | 'stopping';

const MESSAGES: Record<StopReason, string> = {
  deleted: 'library deleted',
  lease: 'scanner lease lost to another replica',
  stopping: 'service stopping',
};

export class ScanStopped extends Error {
  override name = 'ScanStopped';
  /** what the scan had done when it stopped */
  counts?: Record<string, number>;
  constructor(readonly reason: StopReason) {
    super(MESSAGES[reason]);
  }
}

/** Throws the signal's reason (a ScanStopped) once it is aborted. */
export function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new ScanStopped('stopping');
}
