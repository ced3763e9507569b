// A read-through cache of profiles for the hot profile read. Entries are dropped when this replica
// commits a change to the user, and when any replica's change reaches it through identity's own
// event stream; a reader that loaded before an invalidation never stores what it loaded.
import { LRUCache } from 'lru-cache';
import type { Identity } from '@bindery/contracts';

const TTL_MS = 30_000;
const MAX = 20_000;

export class ProfileCache {
  private readonly entries: LRUCache<string, Identity.UserProfile>;
  private epoch = 0;

  constructor(nowMs: () => number = Date.now) {
    // ttlResolution 0: the expiry check reads the clock each time (an injected clock included).
    this.entries = new LRUCache({ max: MAX, ttl: TTL_MS, ttlResolution: 0, perf: { now: nowMs } });
  }

  async get(id: string, load: () => Promise<Identity.UserProfile | undefined>): Promise<Identity.UserProfile | undefined> {
    const hit = this.entries.get(id);
    if (hit) return hit;
    const epoch = this.epoch;
    const profile = await load();
    if (profile && epoch === this.epoch) this.entries.set(id, profile);
    return profile;
  }

  invalidate(id: string): void {
    this.epoch++;
    this.entries.delete(id);
  }
}
