// Collections, saved filters and the dashboard (docs/decisions.md, "Reading"): the five system
// collections of every new account and their rules, custom and smart collections, auto-assign,
// dashboard order and hiding; another user sees none of it.
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, expectError, instances, NO_SUCH_ID, register, type Account, type Call } from './helpers';
import { makeItem, put, shelf, type Shelf } from './reading-helpers';

const modes = await availableModes();
const get = instances(modes);

const SYSTEM = [
  { name: 'Continue Reading', query_type: 'continue-reading', priority: 1, color: '#7aa2f7', icon: '📖' },
  { name: 'Recently Added', query_type: 'recently-added', priority: 2, color: '#9ece6a', icon: '🆕' },
  { name: 'Recently Read', query_type: 'recently-read', priority: 3, color: '#e0af68', icon: '✅' },
  { name: 'Not Started', query_type: 'not-started', priority: 4, color: '#f7768e', icon: '📕' },
  { name: 'Continue Series', query_type: 'continue-series', priority: 5, color: '#bb9af7', icon: '📚' },
];

describe.each(modes)('collections, saved filters, dashboard (%s)', (mode) => {
  let call: Call;
  let s: Shelf;
  let reader: Account;
  let other: Account;
  const byTitle: Record<string, string> = {};
  let system: Record<string, Record<string, any>>;

  const ids = (r: { json: any }) => r.json.data.map((b: { media_item_id: string }) => b.media_item_id);
  const collections = async (token: string) => {
    const r = await call('GET', '/api/collections', { token });
    expect(r.status, r.text).toBe(200);
    return r.json.data as Record<string, any>[];
  };

  beforeAll(async () => {
    call = api(await get(mode));
    s = await shelf(call, `Shelf ${mode}`, [
      'Alpha',
      'Beta',
      'Gamma',
      { title: 'Saga One', series: 'Saga', series_index: 1, authors: ['Sam Saga'] },
      { title: 'Saga Two', series: 'Saga', series_index: 2, authors: ['Sam Saga'] },
      { title: 'Saga Three', series: 'Saga', series_index: 3, authors: ['Sam Saga'] },
    ]);
    for (const i of s.items) byTitle[i.title] = i.id;
    reader = await register(call);
    other = await register(call);
  }, 180_000);

  it('gives every new account the five system collections of the table', async () => {
    const list = await eventually(async () => {
      const l = await collections(reader.token);
      expect(l.length).toBe(5);
      return l;
    }, 10_000);
    expect(list.map((c) => ({ name: c.name, query_type: c.query_type, priority: c.priority, color: c.color, icon: c.icon }))).toEqual(SYSTEM);
    for (const c of list) expect(c).toMatchObject({ is_system: true, show_on_dashboard: true });
    system = Object.fromEntries(list.map((c) => [c.query_type, c]));
    await eventually(async () => expect((await collections(other.token)).length).toBe(5), 10_000);
    expect((await collections(other.token)).map((c) => c.id).some((id) => list.some((l) => l.id === id))).toBe(false);
  });

  it('fills the system collections by their rules', async () => {
    await put(call, reader.token, byTitle.Alpha!, { percentage: 0.3 });
    await put(call, reader.token, byTitle.Beta!, { percentage: 1 });
    await put(call, reader.token, byTitle['Saga One']!, { percentage: 1 });
    const items = (q: string) => call('GET', `/api/collections/${system[q]!.id}/items?limit=100`, { token: reader.token });
    expect(ids(await items('continue-reading'))).toEqual([byTitle.Alpha]);
    const cr = await items('continue-reading');
    expect(cr.json.data[0]).toMatchObject({ media_item_id: byTitle.Alpha, percentage: 0.3, item: { id: byTitle.Alpha, title: 'Alpha' } });
    expect(ids(await items('recently-read')).sort()).toEqual([byTitle.Beta, byTitle['Saga One']].sort());
    expect(ids(await items('not-started')).sort()).toEqual([byTitle.Gamma, byTitle['Saga Two'], byTitle['Saga Three']].sort());
    expect(ids(await items('continue-series'))).toEqual([byTitle['Saga Two']]);
    expect(ids(await items('recently-added')).sort()).toEqual(Object.values(byTitle).sort());
    const counts = Object.fromEntries((await collections(reader.token)).map((c) => [c.query_type, c.item_count]));
    expect(counts).toEqual({ 'continue-reading': 1, 'recently-added': 6, 'recently-read': 2, 'not-started': 3, 'continue-series': 1 });
    expect((await call('GET', `/api/collections/${system['recently-read']!.id}`, { token: reader.token })).json).toMatchObject({
      name: 'Recently Read',
      item_count: 2,
      is_system: true,
    });
    // the other user has read nothing
    const theirs = Object.fromEntries((await collections(other.token)).map((c) => [c.query_type, c]));
    expect((await call('GET', `/api/collections/${theirs['continue-reading'].id}/items`, { token: other.token })).json.data).toEqual([]);
    expect((await call('GET', `/api/collections/${theirs['not-started'].id}/items?limit=100`, { token: other.token })).json.data.length).toBe(6);
    expectError(
      await call('POST', `/api/collections/${system['not-started']!.id}/items`, { token: reader.token, body: { media_item_ids: [byTitle.Alpha] } }),
      400,
      'items of a system collection follow its rule and cannot be added or removed',
    );
  });

  it('keeps custom collections: add and remove items, names unique, per user', async () => {
    const c = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Favourites', color: '#ff0000', show_on_dashboard: true } });
    expect(c.status, c.text).toBe(201);
    expect(c.json).toMatchObject({ name: 'Favourites', is_system: false, is_smart: false, color: '#ff0000', show_on_dashboard: true });
    expectError(await call('POST', '/api/collections', { token: reader.token, body: { name: 'favourites' } }), 409, 'collection name already exists');
    expectError(await call('POST', '/api/collections', { token: reader.token, body: { name: ' ' } }), 400, 'name is required');
    const add = await call('POST', `/api/collections/${c.json.id}/items`, { token: reader.token, body: { media_item_ids: [byTitle.Gamma, byTitle.Alpha, NO_SUCH_ID] } });
    expect(add.status, add.text).toBe(200);
    expect(add.json.added.sort()).toEqual([byTitle.Gamma, byTitle.Alpha].sort());
    expect(add.json.failed).toEqual([{ id: NO_SUCH_ID, error: 'media item not found' }]);
    expect(ids(await call('GET', `/api/collections/${c.json.id}/items`, { token: reader.token }))).toEqual([byTitle.Gamma, byTitle.Alpha]);
    const rm = await call('DELETE', `/api/collections/${c.json.id}/items/${byTitle.Gamma}`, { token: reader.token });
    expect(rm.json).toEqual({ message: 'item removed' });
    expect(ids(await call('GET', `/api/collections/${c.json.id}/items`, { token: reader.token }))).toEqual([byTitle.Alpha]);
    const up = await call('PUT', `/api/collections/${c.json.id}`, { token: reader.token, body: { name: 'Loved', priority: 0 } });
    expect(up.json).toMatchObject({ name: 'Loved', priority: 0 });
    // another user: 404 everywhere, nothing of it in their list
    expectError(await call('GET', `/api/collections/${c.json.id}`, { token: other.token }), 404, 'collection not found');
    expectError(await call('GET', `/api/collections/${c.json.id}/items`, { token: other.token }), 404, 'collection not found');
    expectError(await call('POST', `/api/collections/${c.json.id}/items`, { token: other.token, body: { media_item_ids: [byTitle.Beta] } }), 404, 'collection not found');
    expectError(await call('PUT', `/api/collections/${c.json.id}`, { token: other.token, body: { name: 'Mine' } }), 404, 'collection not found');
    expectError(await call('DELETE', `/api/collections/${c.json.id}`, { token: other.token }), 404, 'collection not found');
    expect((await collections(other.token)).some((x) => x.id === c.json.id)).toBe(false);
    expectError(await call('GET', '/api/collections/nope', { token: reader.token }), 400, 'invalid collection id');
    expectError(await call('GET', '/api/collections/nope/items', { token: reader.token }), 400, 'invalid collection id');
    expectError(await call('GET', `/api/collections/${c.json.id}/items?limit=0`, { token: reader.token }), 400, 'limit must be a whole number from 1 to 1000');
    expectError(await call('GET', `/api/collections/${c.json.id}/items?offset=-1`, { token: reader.token }), 400, 'offset must be a whole number of at least 0');
    expect((await call('GET', `/api/collections/${c.json.id}/items?limit=1&offset=0`, { token: reader.token })).json).toMatchObject({ total: 1, limit: 1, offset: 0 });
    expectError(await call('GET', '/api/collections'), 401, 'authentication required');
    expect((await call('DELETE', `/api/collections/${c.json.id}`, { token: reader.token })).json).toEqual({ message: 'collection deleted' });
    expectError(await call('GET', `/api/collections/${c.json.id}`, { token: reader.token }), 404, 'collection not found');
  });

  it('previews and keeps smart collections built from rules', async () => {
    const rules = {
      match: 'all',
      conditions: [
        { field: 'author', op: 'contains', value: 'saga' },
        { field: 'read_status', op: 'not_equals', value: 'finished' },
      ],
    };
    const p = await call('POST', '/api/collections/preview', { token: reader.token, body: { rules } });
    expect(p.status, p.text).toBe(200);
    expect(ids(p).sort()).toEqual([byTitle['Saga Two'], byTitle['Saga Three']].sort());
    expectError(
      await call('POST', '/api/collections/preview', { token: reader.token, body: { rules: { conditions: [{ field: 'mood', op: 'equals', value: 'x' }] } } }),
      400,
      'rules.conditions[0].field must be one of title, author, series, tags, language, publisher, year, rating, progress, added_date, last_read_date, format, library, read_status',
    );
    expectError(
      await call('POST', '/api/collections/preview', { token: reader.token, body: { rules: { conditions: [{ field: 'year', op: 'contains', value: 1 }] } } }),
      400,
      'rules.conditions[0].op must be one of equals, not_equals, gt, gte, lt, lte, is_empty, is_not_empty for year',
    );
    const smart = await call('POST', '/api/collections', { token: reader.token, body: { name: 'Unfinished saga', rules, show_on_dashboard: true, priority: 6 } });
    expect(smart.status, smart.text).toBe(201);
    expect(smart.json.is_smart).toBe(true);
    expect(ids(await call('GET', `/api/collections/${smart.json.id}/items`, { token: reader.token })).sort()).toEqual([byTitle['Saga Two'], byTitle['Saga Three']].sort());
    expectError(
      await call('POST', `/api/collections/${smart.json.id}/items`, { token: reader.token, body: { media_item_ids: [byTitle.Alpha] } }),
      400,
      'items of a smart collection follow its rules and cannot be added or removed',
    );
    await put(call, reader.token, byTitle['Saga Two']!, { percentage: 1 });
    expect(ids(await call('GET', `/api/collections/${smart.json.id}/items`, { token: reader.token }))).toEqual([byTitle['Saga Three']]);
  });

  it('answers every field and operator of the rules, in the preview and on the dashboard', async () => {
    const conditions = [
      ...['title', 'author', 'series', 'tags', 'language', 'publisher'].flatMap((field) =>
        ['contains', 'not_contains', 'equals', 'not_equals', 'starts_with', 'is_empty', 'is_not_empty'].map((op) => ({ field, op, value: 'sa' })),
      ),
      ...['year', 'rating', 'progress'].flatMap((field) => ['equals', 'not_equals', 'gt', 'gte', 'lt', 'lte', 'is_empty', 'is_not_empty'].map((op) => ({ field, op, value: 1 }))),
      ...['added_date', 'last_read_date'].flatMap((field) => [
        { field, op: 'before', value: '2100-01-01' },
        { field, op: 'after', value: '2000-01-01T00:00:00Z' },
        { field, op: 'within_days', value: 7 },
        { field, op: 'is_empty' },
      ]),
      { field: 'format', op: 'equals', value: 'epub' },
      { field: 'format', op: 'not_equals', value: 'pdf' },
      { field: 'library', op: 'equals', value: s.library.id },
      { field: 'library', op: 'not_equals', value: s.library.id },
      ...['unread', 'reading', 'finished'].map((value) => ({ field: 'read_status', op: 'equals', value })),
    ];
    expectError(
      await call('POST', '/api/collections/preview', { token: reader.token, body: { rules: { conditions } } }),
      400,
      'rules.conditions must be a list of 1 to 50 conditions',
    );
    for (const c of conditions) {
      const r = await call('POST', '/api/collections/preview?limit=100', { token: reader.token, body: { rules: { conditions: [c] } } });
      expect(r.status, `${JSON.stringify(c)}: ${r.text}`).toBe(200);
    }
    // at most 50 conditions to a rule: the last 50 (every kind but the text fields)
    const tail = conditions.slice(-50);
    const some = await call('POST', '/api/collections/preview?limit=100', { token: reader.token, body: { rules: { match: 'any', conditions: tail } } });
    expect(some.json.total).toBe(6);
    // the dashboard compiles the same rules over its own tables
    for (const [i, part] of [conditions.slice(0, 50), tail].entries()) {
      const every = await call('POST', '/api/collections', {
        token: reader.token,
        body: { name: `Everything rule ${i}`, rules: { match: 'any', conditions: part }, show_on_dashboard: true },
      });
      expect(every.status, every.text).toBe(201);
      const preview = await call('POST', '/api/collections/preview?limit=100', { token: reader.token, body: { rules: { match: 'any', conditions: part } } });
      const d = await call('GET', '/api/dashboard/sections?limit=100', { token: reader.token });
      expect(d.status, d.text).toBe(200);
      const section = d.json.sections.find((x: { id: string }) => x.id === every.json.id);
      expect(section.books.map((b: { media_item_id: string }) => b.media_item_id).sort()).toEqual(preview.json.data.map((b: { media_item_id: string }) => b.media_item_id).sort());
      expect((await call('DELETE', `/api/collections/${every.json.id}`, { token: reader.token })).status).toBe(200);
    }
  });

  it('adds newly catalogued items to collections with matching auto-assign rules', async () => {
    const c = await call('POST', '/api/collections', {
      token: reader.token,
      body: { name: 'Later', auto_assign: { conditions: [{ field: 'title', op: 'starts_with', value: 'later' }] } },
    });
    expect(c.status, c.text).toBe(201);
    const late = await makeItem(call, s.admin, s.library.id, { title: 'Later Arrival', authors: ['A. Writer'] });
    await makeItem(call, s.admin, s.library.id, { title: 'Not Later', authors: ['A. Writer'] });
    await eventually(async () => expect(ids(await call('GET', `/api/collections/${c.json.id}/items`, { token: reader.token }))).toEqual([late.id]), 10_000);
  });

  it('deletes and restores a system collection', async () => {
    const ns = system['not-started']!;
    expect((await call('PUT', `/api/collections/${ns.id}`, { token: reader.token, body: { color: '#000000' } })).json.color).toBe('#000000');
    expectError(await call('PUT', `/api/collections/${ns.id}`, { token: reader.token, body: { name: 'Unread' } }), 400, 'the name of a system collection cannot change');
    const again = await call('POST', '/api/collections/system/restore', { token: reader.token, body: { query_type: 'not-started' } });
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ id: ns.id, color: '#f7768e', is_system: true });
    expect((await call('DELETE', `/api/collections/${ns.id}`, { token: reader.token })).status).toBe(200);
    const back = await call('POST', '/api/collections/system/restore', { token: reader.token, body: { query_type: 'not-started' } });
    expect(back.status, back.text).toBe(201);
    expect(back.json).toMatchObject({ name: 'Not Started', query_type: 'not-started', priority: 4, color: '#f7768e', icon: '📕', show_on_dashboard: true, is_system: true });
    system['not-started'] = back.json;
    expectError(
      await call('POST', '/api/collections/system/restore', { token: reader.token, body: { query_type: 'favourites' } }),
      400,
      'query_type must name a system collection: continue-reading, recently-added, recently-read, not-started, continue-series',
    );
  });

  it('serves dashboard sections with books by media_item_id, hidden collections removed and order applied', async () => {
    const d = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(d.status, d.text).toBe(200);
    expect(d.json.sections.map((x: { name: string }) => x.name)).toEqual([...SYSTEM.map((x) => x.name), 'Unfinished saga']);
    const cr = d.json.sections[0];
    expect(cr).toMatchObject({ id: system['continue-reading']!.id, query_type: 'continue-reading', is_system: true, total: 1 });
    expect(cr.books).toEqual([expect.objectContaining({ media_item_id: byTitle.Alpha, percentage: 0.3, item: expect.objectContaining({ title: 'Alpha' }) })]);
    expect(d.json.sections.at(-1)).toMatchObject({ is_system: false, name: 'Unfinished saga' });
    const prefs = await call('PUT', '/api/dashboard/preferences', {
      token: reader.token,
      body: { hidden_collections: [system['recently-added']!.id], collection_order: [system['continue-series']!.id, system['recently-read']!.id] },
    });
    expect(prefs.status, prefs.text).toBe(200);
    expect(prefs.json).toEqual({
      message: 'dashboard preferences updated',
      hidden_collections: [system['recently-added']!.id],
      collection_order: [system['continue-series']!.id, system['recently-read']!.id],
    });
    const after = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(after.json.sections.map((x: { name: string }) => x.name)).toEqual(['Continue Series', 'Recently Read', 'Continue Reading', 'Not Started', 'Unfinished saga']);
    expect((await call('GET', '/api/dashboard/preferences', { token: reader.token })).json).toEqual({
      hidden_collections: [system['recently-added']!.id],
      collection_order: [system['continue-series']!.id, system['recently-read']!.id],
    });
    expectError(await call('PUT', '/api/dashboard/preferences', { token: reader.token, body: { hidden_collections: [NO_SUCH_ID] } }), 400, `collection not found: ${NO_SUCH_ID}`);
    expectError(
      await call('PUT', '/api/dashboard/preferences', { token: other.token, body: { hidden_collections: [system['continue-reading']!.id] } }),
      400,
      `collection not found: ${system['continue-reading']!.id}`,
    );
    expectError(
      await call('PUT', '/api/dashboard/preferences', { token: reader.token, body: { collection_order: 'x' } }),
      400,
      'collection_order must be a list of collection ids',
    );
    // a position written now shows on the very next dashboard read
    expect((await put(call, reader.token, byTitle.Gamma!, { percentage: 0.2 })).json.status).toBe('saved');
    const fresh = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(fresh.json.sections.find((x: { query_type: string }) => x.query_type === 'continue-reading').books.map((b: { media_item_id: string }) => b.media_item_id)).toEqual([
      byTitle.Gamma,
      byTitle.Alpha,
    ]);
    // the dashboard's projection rebuilt from the reading log answers the same
    const rebuilt = await call('POST', '/api/admin/projections/reading/rebuild?wait=true', { token: s.admin.token });
    expect(rebuilt.status, rebuilt.text).toBe(200);
    expect((await call('GET', '/api/dashboard/sections', { token: reader.token })).json).toEqual(fresh.json);
    // the other user's dashboard has none of the reader's books or sections
    const theirs = await call('GET', '/api/dashboard/sections', { token: other.token });
    expect(theirs.json.sections.map((x: { name: string }) => x.name)).toEqual(SYSTEM.map((x) => x.name));
    expect(theirs.json.sections[0].books).toEqual([]);
    // a library the reader can no longer see leaves every section
    expect((await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: s.admin.token, body: { library_ids: [] } })).status).toBe(200);
    const none = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(none.json.sections.every((x: { books: unknown[]; total: number }) => x.books.length === 0 && x.total === 0)).toBe(true);
    expect((await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: s.admin.token, body: { all_libraries: true } })).status).toBe(200);
  });

  it('keeps saved filters per user with resource_type; 400, 401 and 404 as the spec says', async () => {
    const c = await call('POST', '/api/saved-filters', { token: reader.token, body: { name: 'Sagas', resource_type: 'media_items', filter: { series_filter: 'Saga' } } });
    expect(c.status, c.text).toBe(201);
    expect(c.json).toMatchObject({ name: 'Sagas', resource_type: 'media_items', filter: { series_filter: 'Saga' } });
    const c2 = await call('POST', '/api/saved-filters', { token: reader.token, body: { name: 'Mine', resource_type: 'collections', filter: {} } });
    expect(c2.status).toBe(201);
    expect((await call('GET', '/api/saved-filters?resource_type=media_items', { token: reader.token })).json.data.map((f: { id: string }) => f.id)).toEqual([c.json.id]);
    expect((await call('GET', '/api/saved-filters', { token: reader.token })).json.data.length).toBe(2);
    expect((await call('GET', `/api/saved-filters/${c.json.id}`, { token: reader.token })).json).toEqual(c.json);
    const up = await call('PUT', `/api/saved-filters/${c.json.id}`, { token: reader.token, body: { filter: { series_filter: '"Saga"' } } });
    expect(up.json.filter).toEqual({ series_filter: '"Saga"' });
    expectError(await call('POST', '/api/saved-filters', { token: reader.token, body: { name: 'x', filter: {} } }), 400, 'resource_type is required');
    expectError(
      await call('POST', '/api/saved-filters', { token: reader.token, body: { name: 'x', resource_type: 'media_items', filter: 'q' } }),
      400,
      'filter must be an object or a list',
    );
    expectError(await call('GET', '/api/saved-filters/nope', { token: reader.token }), 400, 'invalid saved filter id');
    expectError(await call('GET', `/api/saved-filters/${NO_SUCH_ID}`, { token: reader.token }), 404, 'saved filter not found');
    expectError(await call('GET', `/api/saved-filters/${c.json.id}`), 401, 'authentication required');
    expectError(await call('GET', '/api/saved-filters'), 401, 'authentication required');
    expectError(await call('GET', `/api/saved-filters/${c.json.id}`, { token: other.token }), 404, 'saved filter not found');
    expectError(await call('PUT', `/api/saved-filters/${c.json.id}`, { token: other.token, body: { name: 'stolen' } }), 404, 'saved filter not found');
    expectError(await call('DELETE', `/api/saved-filters/${c.json.id}`, { token: other.token }), 404, 'saved filter not found');
    expect((await call('GET', '/api/saved-filters', { token: other.token })).json).toEqual({ data: [] });
    // a saved filter that holds rules makes a dashboard section
    const rulesFilter = await call('POST', '/api/saved-filters', {
      token: reader.token,
      body: { name: 'Gamma only', resource_type: 'collections', filter: { conditions: [{ field: 'title', op: 'equals', value: 'gamma' }] } },
    });
    const section = await call('POST', '/api/collections', { token: reader.token, body: { name: 'From a filter', saved_filter_id: rulesFilter.json.id, show_on_dashboard: true } });
    expect(section.status, section.text).toBe(201);
    expect(section.json).toMatchObject({ is_smart: true, rules: { match: 'all', conditions: [{ field: 'title', op: 'equals', value: 'gamma' }] } });
    const dash = await call('GET', '/api/dashboard/sections', { token: reader.token });
    expect(dash.json.sections.find((x: { id: string }) => x.id === section.json.id).books.map((b: { media_item_id: string }) => b.media_item_id)).toEqual([byTitle.Gamma]);
    expectError(
      await call('POST', '/api/collections', { token: reader.token, body: { name: 'Bad', saved_filter_id: c.json.id } }),
      400,
      'the saved filter holds no collection rules ({match, conditions})',
    );
    expectError(await call('POST', '/api/collections', { token: other.token, body: { name: 'Stolen', saved_filter_id: rulesFilter.json.id } }), 404, 'saved filter not found');
    expect((await call('DELETE', `/api/saved-filters/${c.json.id}`, { token: reader.token })).json).toEqual({ message: 'saved filter deleted' });
    expectError(await call('GET', `/api/saved-filters/${c.json.id}`, { token: reader.token }), 404, 'saved filter not found');
  });
});
