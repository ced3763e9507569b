// Progress conflicts (docs/decisions.md, "Reading"): a device's first push for a book mid-read
// elsewhere, or a write from an older version, opens a conflict instead of losing a position.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { put, shelf, type Shelf } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

describe.each(modes)('progress conflicts (%s)', (mode) => {
  let call: Call;
  let s: Shelf;
  let reader: Account;
  let other: Account;
  let book: string;
  let firstConflict: Record<string, any>;

  beforeAll(async () => {
    call = api(await get(mode));
    s = await shelf(call, `Conflicts ${mode}`, ['One', 'Two', 'Three', 'Four', 'Five']);
    reader = await register(call);
    other = await register(call);
    book = s.items[0]!.id;
  }, 180_000);

  const progressOf = async (id: string, token = reader.token) => (await call('GET', `/api/media-items/${id}/progress`, { token })).json;

  it("opens a conflict when a device's first push disagrees with a book mid-read elsewhere", async () => {
    expect((await put(call, reader.token, book, { percentage: 0.4, client: 'web', device: 'laptop' })).json.status).toBe('saved');
    const r = await put(call, reader.token, book, { percentage: 0.7, client: 'koreader', device: 'kobo-clara' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.status).toBe('conflict');
    expect(r.json.progress.percentage).toBe(0.4);
    expect(r.json.conflict).toMatchObject({
      media_item_id: book,
      status: 'open',
      reason: 'first-push',
      current: { percentage: 0.4, device: 'laptop' },
      incoming: { percentage: 0.7, device: 'kobo-clara', client: 'koreader' },
    });
    firstConflict = r.json.conflict;
    expect((await progressOf(book)).percentage).toBe(0.4);
    // the same device reading on updates what the conflict offers
    const again = await put(call, reader.token, book, { percentage: 0.72, client: 'koreader', device: 'kobo-clara' });
    expect(again.json.status).toBe('conflict');
    expect(again.json.conflict.id).toBe(firstConflict.id);
    expect(again.json.conflict.incoming.percentage).toBe(0.72);
    const list = await call('GET', '/api/progress-conflicts', { token: reader.token });
    expect(list.status, list.text).toBe(200);
    expect(list.json.data.map((c: { id: string }) => c.id)).toEqual([firstConflict.id]);
    const one = await call('GET', `/api/progress-conflicts/${firstConflict.id}`, { token: reader.token });
    expect(one.json).toEqual(list.json.data[0]);
  });

  it('keeps a conflict to its owner', async () => {
    expectError(await call('GET', `/api/progress-conflicts/${firstConflict.id}`, { token: other.token }), 404, 'progress conflict not found');
    expectError(await call('POST', `/api/progress-conflicts/${firstConflict.id}/resolve`, { token: other.token, body: { keep: 'incoming' } }), 404, 'progress conflict not found');
    expectError(await call('DELETE', `/api/progress-conflicts/${firstConflict.id}`, { token: other.token }), 404, 'progress conflict not found');
    expect((await call('GET', '/api/progress-conflicts?status=all', { token: other.token })).json).toEqual({ data: [] });
    const b = await call('POST', '/api/progress-conflicts/bulk-resolve', { token: other.token, body: { ids: [firstConflict.id], keep: 'incoming' } });
    expect(b.json).toEqual({ message: 'progress conflicts resolved', succeeded: [], failed: [{ id: firstConflict.id, error: 'progress conflict not found' }] });
    expect((await call('POST', '/api/progress-conflicts/dismiss-all', { token: other.token })).json.succeeded).toEqual([]);
    expect((await call('GET', `/api/progress-conflicts/${firstConflict.id}`, { token: reader.token })).json.status).toBe('open');
  });

  it('resolves by keeping the incoming position; a second resolve is 409', async () => {
    expectError(
      await call('POST', `/api/progress-conflicts/${firstConflict.id}/resolve`, { token: reader.token, body: { keep: 'both' } }),
      400,
      "keep must be 'current' or 'incoming'",
    );
    const r = await call('POST', `/api/progress-conflicts/${firstConflict.id}/resolve`, { token: reader.token, body: { keep: 'incoming' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ id: firstConflict.id, status: 'resolved', resolution: 'incoming' });
    expect(await progressOf(book)).toMatchObject({ percentage: 0.72, device: 'kobo-clara', client: 'koreader' });
    expectError(
      await call('POST', `/api/progress-conflicts/${firstConflict.id}/resolve`, { token: reader.token, body: { keep: 'current' } }),
      409,
      'progress conflict is already closed',
    );
    expect((await call('GET', '/api/progress-conflicts', { token: reader.token })).json).toEqual({ data: [] });
    expect((await call('GET', '/api/progress-conflicts?status=resolved', { token: reader.token })).json.data.length).toBe(1);
  });

  it('opens a conflict for a write made from an older version by another device; keeping the current one keeps the other in the history', async () => {
    const cur = await progressOf(book);
    const r = await put(call, reader.token, book, { percentage: 0.5, client: 'web', device: 'laptop', version: cur.version - 1 });
    expect(r.json.status).toBe('conflict');
    expect(r.json.conflict.reason).toBe('concurrent');
    const k = await call('POST', `/api/progress-conflicts/${r.json.conflict.id}/resolve`, { token: reader.token, body: { keep: 'current' } });
    expect(k.json).toMatchObject({ status: 'resolved', resolution: 'current' });
    expect((await progressOf(book)).percentage).toBe(0.72);
    const h = await call('GET', `/api/progress/${book}/history`, { token: reader.token });
    expect(h.json.data[0]).toMatchObject({ percentage: 0.5, device: 'laptop', reason: 'conflict resolved: not kept' });
    // the same device writing from the current version is a plain write
    expect((await put(call, reader.token, book, { percentage: 0.75, client: 'web', device: 'laptop', version: cur.version })).json.status).toBe('saved');
  });

  it('resolves and dismisses in bulk, dismisses all, and deletes', async () => {
    const ids: string[] = [];
    for (const item of s.items.slice(1)) {
      expect((await put(call, reader.token, item.id, { percentage: 0.3, device: 'laptop' })).json.status).toBe('saved');
      const c = await put(call, reader.token, item.id, { percentage: 0.9, client: 'koreader', device: 'kobo-clara' });
      expect(c.json.status).toBe('conflict');
      ids.push(c.json.conflict.id);
    }
    expectError(
      await call('POST', '/api/progress-conflicts/bulk-resolve', { token: reader.token, body: { ids: [], keep: 'incoming' } }),
      400,
      'ids must be a non-empty list of ids',
    );
    expectError(await call('POST', '/api/progress-conflicts/bulk-resolve', { token: reader.token, body: { ids: [ids[0]] } }), 400, "keep must be 'current' or 'incoming'");
    const b = await call('POST', '/api/progress-conflicts/bulk-resolve', { token: reader.token, body: { ids: [ids[0], ids[1], NO_SUCH_ID], keep: 'incoming' } });
    expect(b.status, b.text).toBe(200);
    expect(b.json.succeeded.sort()).toEqual([ids[0], ids[1]].sort());
    expect(b.json.failed).toEqual([{ id: NO_SUCH_ID, error: 'progress conflict not found' }]);
    expect((await progressOf(s.items[1]!.id)).percentage).toBe(0.9);
    const d = await call('POST', '/api/progress-conflicts/bulk-dismiss', { token: reader.token, body: { ids: [ids[2]] } });
    expect(d.json).toEqual({ message: 'progress conflicts dismissed', succeeded: [ids[2]], failed: [] });
    expect((await progressOf(s.items[3]!.id)).percentage).toBe(0.3);
    const all = await call('POST', '/api/progress-conflicts/dismiss-all', { token: reader.token });
    expect(all.json.succeeded).toEqual([ids[3]]);
    expect((await call('GET', '/api/progress-conflicts', { token: reader.token })).json).toEqual({ data: [] });
    expect((await call('GET', `/api/progress-conflicts/${ids[2]}`, { token: reader.token })).json.status).toBe('dismissed');
    const del = await call('DELETE', `/api/progress-conflicts/${ids[2]}`, { token: reader.token });
    expect(del.json).toEqual({ message: 'progress conflict deleted' });
    expectError(await call('GET', `/api/progress-conflicts/${ids[2]}`, { token: reader.token }), 404, 'progress conflict not found');
    expectError(await call('GET', '/api/progress-conflicts/nope', { token: reader.token }), 400, 'invalid progress conflict id');
    expectError(await call('GET', '/api/progress-conflicts?status=later', { token: reader.token }), 400, "status must be 'open', 'resolved', 'dismissed' or 'all'");
    expectError(await call('GET', '/api/progress-conflicts'), 401, 'authentication required');
  });
});
