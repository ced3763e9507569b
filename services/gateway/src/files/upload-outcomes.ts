// What the scanner made of an uploaded file, as the catalog's log tells every gateway replica: a file
// issue recorded at its path, or the end of the scan that was to read it. (A catalogued file shows as
// an item in the read model, which the route asks itself.) Kept a few minutes, then forgotten.
import type { Bus, Subscription } from '@bindery/platform';

const KEEP_MS = 5 * 60_000;
const TYPES = ['catalog.file-issue-recorded.v1', 'catalog.scan-finished.v1'] as const;

export class UploadOutcomes {
  private issues = new Map<string, { error: string; at: number }>();
  private finished = new Map<string, number>();
  private wake = new Set<() => void>();
  private sub: Subscription | null = null;

  async start(bus: Bus): Promise<void> {
    this.sub = await bus.follow({
      source: 'catalog',
      types: TYPES,
      from: 'now',
      handler: async (ev) => {
        const now = Date.now();
        if (ev.type === 'catalog.file-issue-recorded.v1') {
          const { issue } = ev.data as { issue: { library_id: string; file_path: string; error: string } };
          this.issues.set(key(issue.library_id, issue.file_path), { error: issue.error, at: now });
        } else this.finished.set((ev.data as { scan_id: string }).scan_id, now);
        this.forgetOld(now);
        for (const w of [...this.wake]) w();
      },
    });
  }

  async stop(): Promise<void> {
    await this.sub?.stop();
    this.sub = null;
  }

  /** The scanner's error for the file, when it recorded one after `since` (ms epoch). */
  issue(libraryId: string, relPath: string, since: number): string | null {
    const i = this.issues.get(key(libraryId, relPath));
    return i && i.at >= since ? i.error : null;
  }

  /** When the scan finished (ms epoch), or null. */
  finishedAt(scanId: string): number | null {
    return this.finished.get(scanId) ?? null;
  }

  /** Resolves on the next event followed, or after `ms`. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wake.add(done);
    });
  }

  private forgetOld(now: number): void {
    for (const [k, v] of this.issues) if (now - v.at > KEEP_MS) this.issues.delete(k);
    for (const [k, at] of this.finished) if (now - at > KEEP_MS) this.finished.delete(k);
  }
}

const key = (libraryId: string, relPath: string) => `${libraryId}\n${relPath}`;
