// A service as the host runs it and the readiness probe watches it.

export interface RunningService {
  name: string;
  /** false while catching up or stopping */
  ready(): boolean;
  /** stop taking work, finish what is in flight */
  stop(): Promise<void>;
}
