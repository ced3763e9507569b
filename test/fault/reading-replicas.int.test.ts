// Two reading replicas keep the items' facts they check positions against (page counts, EPUB hashes)
// and drop them together: the replica that applies the catalog's change tells the other (decision 92).
// Both write one user's position in one book at once: each write saved once, its version checked
// (decision 96: saved where the position is still the one read, else the locked way).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, spawnBindery, startBindery, type Bindery, type Proc } from '../support/bindery';
import { api, expectError, register, type Account, type Call } from '../e2e/helpers';
import { put, shelf } from '../e2e/reading-helpers';

const distributed = (await availableModes()).includes('distributed');

describe.skipIf(!distributed)('reading replicas (distributed)', () => {
  let b: Bindery;
  let second: Proc;
  let call: Call;
  let admin: Account;
  let reader: Account;
  let comic: string;
  beforeAll(async () => {
    b = await startBindery('distributed');
    second = (await spawnBindery('service', { ...b.env, BINDERY_SERVICES: 'reading' }, /bindery reading started/)).proc;
    call = api(b);
    admin = await register(call);
    const s = await shelf(call, 'Replicated comics', [{ title: 'A Long Comic', page_count: 9 }], admin);
    comic = s.items[0]!.id;
    reader = await register(call);
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await b?.stop();
  });

  it("a page count changed through one replica's reaction is what both replicas check the next positions against", async () => {
    // both replicas answer writes (requests are shared at random) and keep the page count they read: 9
    for (let i = 0; i < 12; i++) {
      const w = await put(call, reader.token, comic, { page: 8 });
      expect(w.status, w.text).toBe(200);
      expect(w.json.progress).toMatchObject({ page: 8, page_count: 9 });
    }
    const edit = await call('PATCH', `/api/media-items/${comic}`, { token: admin.token, body: { page_count: 5 } });
    expect(edit.status, edit.text).toBe(200);
    // the replica that applies the catalog's event refuses page 8 from then on
    const deadline = Date.now() + 15_000;
    for (;;) {
      const w = await put(call, reader.token, comic, { page: 8 });
      if (w.status === 400) break;
      expect(w.status, w.text).toBe(200);
      if (Date.now() > deadline) throw new Error('no replica learned the new page count within 15 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    // and so does the other one, well within the 10 s its kept copy could otherwise live
    for (let i = 0; i < 12; i++) expectError(await put(call, reader.token, comic, { page: 8 }), 400, 'page must not be past page_count');
    const ok = await put(call, reader.token, comic, { page: 5 });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.progress).toMatchObject({ page: 5, page_count: 5, percentage: 1 });
  });

  it("writes of one user's book through both replicas at once are each saved once, versions one after another", async () => {
    const s = await shelf(call, 'Raced books', ['A Raced Book'], admin);
    const book = s.items[0]!.id;
    const writer = await register(call);
    const N = 40;
    // one device, positions moving on: no conflict and no guard, so every write is to be saved
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => put(call, writer.token, book, { percentage: 0.1 + i / 100 })));
    for (const a of answers) {
      expect(a.status, a.text).toBe(200);
      expect(a.json.status).toBe('saved');
    }
    // each saved once: every version from 1 to N, none twice (a write that lost its race went again)
    expect(answers.map((a) => a.json.progress.version).sort((x: number, y: number) => x - y)).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    const now = await call('GET', `/api/media-items/${book}/progress`, { token: writer.token });
    expect(now.json.version).toBe(N);
    // the answer that got version N holds the position now kept
    const last = answers.find((a) => a.json.progress.version === N)!;
    expect(now.json.percentage).toBe(last.json.progress.percentage);
    const history = await call('GET', `/api/progress/${book}/history`, { token: writer.token });
    expect(history.json.data).toHaveLength(N);
  });
});
