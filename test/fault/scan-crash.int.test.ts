// A catalog killed in the middle of a scan (after a batch has committed) loses nothing and
// duplicates nothing: after the restart the scan runs again and every book is there once.
import { describe, expect, it } from 'vitest';
import { availableModes, startBindery } from '../support/bindery';
import { api, register } from '../e2e/helpers';
import { copyOf, createLibrary, FIXTURE, items, manifest, settled } from '../e2e/catalog-helpers';

const modes = await availableModes();
const rows = manifest();
const readable = rows.filter((r) => r.kind === 'book' || r.kind === 'duplicate' || (r.kind === 'corrupt' && r.note.startsWith('pages fine')));
const dups = rows.filter((r) => r.kind === 'duplicate');

describe.each(modes)('scan interrupted by a crash (%s)', (mode) => {
  it('resumes after a restart with every book once', async () => {
    const b = await startBindery(mode, { BINDERY_FAULT_INJECTION: 'scan-after-batch', SCAN_BATCH_SIZE: '8' });
    try {
      const call = api(b);
      const admin = await register(call);
      const dir = copyOf(FIXTURE);
      const lib = await createLibrary(call, admin.token, { name: 'Crash', folders: [dir], watch: false });
      // the process running the catalog dies after the first batch commits
      // embedded: the one process; distributed: the catalog's (the harness starts identity, catalog, gateway)
      const crashed = mode === 'embedded' ? b.procs[0]! : b.procs[1]!;
      await Promise.race([crashed.exited, new Promise((_, rej) => setTimeout(() => rej(new Error('no crash')), 30_000))]);
      expect(crashed.child.signalCode).toBe('SIGKILL');

      delete b.env.BINDERY_FAULT_INJECTION;
      await b.restart();
      const again = api(b);
      const s = await settled(again, admin.token, lib.id);
      expect(s.status).toBe('completed');
      const list = await items(again, admin.token, lib.id);
      const paths = list.flatMap((i) => i.formats.map((f: { file_path: string }) => f.file_path)).sort();
      expect(paths).toEqual(readable.map((r) => r.path).sort());
      const conflicts = await again('GET', '/api/admin/hash-conflicts', { token: admin.token });
      expect(conflicts.json.data.map((g: { sha256: string }) => g.sha256).sort()).toEqual(dups.map((d) => d.sha256).sort());
    } finally {
      await b.stop();
    }
  }, 120_000);
});
