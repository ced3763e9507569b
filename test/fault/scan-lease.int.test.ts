// Two catalog replicas on one database and one nats-server, with a 2-second scanner lease and
// scans that take longer than that: the lease holder keeps it while scanning (heartbeat), the
// other replica never runs a scan at the same time, and a holder that was frozen past its lease
// (SIGSTOP) writes nothing more once it wakes (fencing). Every book ends up once, in one item.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, startBindery, type Proc } from '../support/bindery';
import { api, register, type Call } from '../e2e/helpers';
import { createLibrary, FIXTURE, items, manifest, settled } from '../e2e/catalog-helpers';

const distributed = (await availableModes()).includes('distributed');
const rows = manifest();
const readable = rows.filter((r) => r.kind === 'book' || r.kind === 'duplicate' || (r.kind === 'corrupt' && r.note.startsWith('pages fine')));
const LEASE_SECONDS = 2;
const LEADS = 'scanner: this replica runs the scans';

const base = mkdtempSync(join(tmpdir(), 'bindery-lease-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** The corpus copied under `copy/` in the library folder; the paths it adds. */
function addCopy(dir: string, copy: string): string[] {
  cpSync(FIXTURE, join(dir, copy), { recursive: true, preserveTimestamps: true });
  return readable.map((r) => `${copy}/${r.path}`);
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  void what;
  return false;
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

/** Every expected path once, in exactly one item, and no item without a file. */
async function expectOnce(call: Call, token: string, libraryId: string, paths: string[]): Promise<void> {
  const list = await items(call, token, libraryId);
  const found = list.flatMap((i) => i.formats.map((f: { file_path: string }) => f.file_path)).sort();
  expect(found).toEqual([...paths].sort());
  expect(list.filter((i) => i.formats.length === 0).map((i) => i.id)).toEqual([]);
}

describe.skipIf(!distributed)('scanner lease across two catalog replicas (distributed)', () => {
  it('one replica scans at a time, through scans longer than the lease and a frozen holder', async () => {
    const b = await startBindery('distributed', {
      SCAN_LEASE_SECONDS: String(LEASE_SECONDS),
      SCAN_BATCH_SIZE: '1',
      SCAN_CONCURRENCY: '1',
      SCAN_WATCH: 'off',
      LOG_LEVEL: 'info',
    });
    let second: Proc | undefined;
    try {
      second = (await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'catalog' }, /bindery catalog started/)).proc;
      const replicas = [b.procs[1]!, second];
      expect(await until('a leader', () => replicas.some((p) => p.output().includes(LEADS)), 15_000)).toBe(true);
      const leader = replicas.find((p) => p.output().includes(LEADS))!;
      const other = replicas.find((p) => p !== leader)!;

      const call = api(b);
      const admin = await register(call);
      const dir = join(base, 'lib');
      // twelve copies of the corpus, one file per batch: several leases long on this machine (3.5 s for six)
      let paths = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'].flatMap((c) => addCopy(dir, c));
      const lib = await createLibrary(call, admin.token, { name: 'Leased', folders: [dir], watch: false });
      const first = await settled(call, admin.token, lib.id, undefined, 120_000);
      expect(first.status).toBe('completed');
      // the scan outlived the lease (renewed every third of it, so several renewals), and stayed with
      // the replica that began it. Twelve copies take 3.5-4 s since the planner's statistics are kept
      // on PostgreSQL (decision 91): more copies would pass the 1,000 items one listing returns.
      const took = Date.parse(first.finished_at) - Date.parse(first.started_at);
      expect(took).toBeGreaterThan(LEASE_SECONDS * 1000);
      await expectOnce(call, admin.token, lib.id, paths);
      expect(count(leader.output(), LEADS)).toBe(1);
      expect(count(other.output(), LEADS)).toBe(0);

      // Freeze the holder in the middle of the next scan for longer than the lease (nine more copies:
      // a scan long enough to be seen running, 21 copies in all within the 1,000 items of a listing).
      paths = [...paths, ...'mnopqrstu'.split('').flatMap((c) => addCopy(dir, c))];
      const queued = await call('POST', '/api/scanner/scan', { token: admin.token, body: { library_id: lib.id } });
      expect(queued.status, queued.text).toBe(202);
      const scanId = queued.json.scans[0].id as string;
      expect(
        await until(
          'progress',
          async () => {
            const s = (await call('GET', '/api/scanner/status', { token: admin.token })).json.scans.find((x: { id: string }) => x.id === scanId);
            return s?.status === 'running' && (s.counts.added ?? 0) + (s.counts.updated ?? 0) > 0;
          },
          60_000,
        ),
      ).toBe(true);
      leader.child.kill('SIGSTOP');
      // the other replica takes over once the lease runs out (unless the freeze caught a write
      // holding the lease row: then the takeover waits for that write to commit)
      await until('takeover', () => other.output().includes(LEADS), 4 * LEASE_SECONDS * 1000 + 5000);
      leader.child.kill('SIGCONT');
      // When the freeze caught a write holding the lease row, the holder's own renewal and the other
      // replica's takeover queue behind that write once it wakes, and either may win: both are right.
      const tookOver = await until('takeover', () => other.output().includes(LEADS), 30_000);
      const second_ = await settled(call, admin.token, lib.id, scanId, 120_000);
      expect(second_.status).toBe('completed');
      if (tookOver) {
        // the woken replica learnt it lost the lease and stopped its scan without finishing it
        expect(await until('lease lost', () => leader.output().includes('scanner: lease lost'), 10_000)).toBe(true);
        expect(leader.output()).toContain('scan stopped; it runs again on the replica that holds the scanner lease');
        expect(leader.output()).not.toContain('"msg":"scan finished","scan":{"id":"' + scanId);
      } else {
        expect(count(other.output(), LEADS)).toBe(0);
        expect(count(leader.output(), LEADS)).toBe(1);
      }
      await expectOnce(call, admin.token, lib.id, paths);
      expect(`${leader.output()}${other.output()}`).not.toMatch(/"level":50/);
    } finally {
      second?.child.kill('SIGCONT');
      await second?.stop();
      await b.stop();
    }
  }, 300_000);
});
