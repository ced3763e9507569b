// A read-through cache of profiles for the hot profile read. Entries are dropped when this replica
// commits a change to the user, and when any replica's change reaches it through identity's own
// event stream; a reader that loaded before an invalidation never stores what it loaded.
import type { Identity } from '@bindery/contracts';

const TTL_MS = 30_000;
const MAX = 20_000;

export class ProfileCache {
  private entries = new Map<string, { at: number; profile: Identity.UserProfile }>();
  private epoch = 0;

  constructor(private readonly nowMs: () => number = Date.now) {}

  async get(id: string, load: () => Promise<Identity.UserProfile | undefined>): Promise<Identity.UserProfile | undefined> {
    const hit = this.entries.get(id);
    if (hit && this.nowMs() - hit.at < TTL_MS) return hit.profile;
    const epoch = this.epoch;
    const profile = await load();
    if (profile && epoch === this.epoch) {
      if (this.entries.size >= MAX) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(id, { at: this.nowMs(), profile });
    }
    return profile;
  }

  invalidate(id: string): void {
    this.epoch++;
    this.entries.delete(id);
  }
}
