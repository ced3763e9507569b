// GET /api/openapi.json against real answers: one or more 2xx JSON answers of each route family
// (auth, profile, libraries, media items, search, progress, annotations, collections, devices,
// kosync, admin, system), each validated with ajv against the schema the document declares for
// that method, path and status. A mismatch fails; so does an answer the document does not declare.
import { createHash } from 'node:crypto';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { availableModes, type Bindery } from '../support/bindery';
import type { Res } from '../support/http';
import { api, instances, login, PASSWORD, register, type Account, type Call } from './helpers';
import { shelf } from './reading-helpers';
import { enroll, registerDevice } from './device-helpers';

const Ajv = (AjvModule as unknown as { default?: typeof AjvModule }).default ?? AjvModule;
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>> };

/** The schema the document declares for a JSON answer of `method path` with `status`. */
function declared(doc: Doc, method: string, path: string, status: number): object {
  const op = doc.paths[path]?.[method.toLowerCase()];
  if (!op) throw new Error(`${method} ${path} is not in the document`);
  const answer = op.responses[String(status)];
  if (!answer) throw new Error(`${method} ${path} does not declare ${status}`);
  const schema = answer.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method} ${path} ${status} declares no JSON answer`);
  return schema;
}

/** A checker of answers against a document: the list of mismatches of one answer ([] when it fits). */
function checker(doc: Doc) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return (method: string, path: string, res: Res): string[] => {
    const validate = ajv.compile(declared(doc, method, path, res.status));
    return validate(res.json) ? [] : (validate.errors ?? []).map((e) => `${method} ${path} ${res.status}: ${e.instancePath || '/'} ${e.message}`);
  };
}

const modes = await availableModes();
const start = instances(modes);

for (const mode of modes) {
  describe(`the API document against real answers (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let doc: Doc;
    let check: ReturnType<typeof checker>;
    let admin: Account;
    const mismatches: string[] = [];
    /** calls, expects a 2xx, and checks the answer against the document */
    const seen = async (method: string, template: string, url: string, token: string | undefined, body?: unknown, headers?: Record<string, string>) => {
      const r = await call(method, url, { ...(token ? { token } : {}), ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
      expect(r.status, `${method} ${url}: ${r.text}`).toBeGreaterThanOrEqual(200);
      expect(r.status, `${method} ${url}: ${r.text}`).toBeLessThan(300);
      mismatches.push(...check(method, template, r));
      return r;
    };

    beforeAll(async () => {
      b = await start(mode);
      call = api(b);
      const r = await call('GET', '/api/openapi.json');
      expect(r.status).toBe(200);
      doc = r.json;
      check = checker(doc);
      admin = await register(call);
    });

    it('is OpenAPI 3.1 with every route family', () => {
      expect(doc.openapi).toBe('3.1.0');
      for (const p of [
        '/api/auth/login',
        '/api/media-items/{id}',
        '/opds/',
        '/uploads/library-{libraryId}/{*}',
        '/api/ws',
        '/api/kosync/syncs/progress/{document}',
        '/kobo/{token}/v1/library/sync',
        '/dashboard',
      ])
        expect(Object.keys(doc.paths), p).toContain(p);
    });

    it('answers as it declares, in every route family', async () => {
      // system
      await seen('GET', '/healthz', '/healthz', undefined);
      await seen('GET', '/api/setup/status', '/api/setup/status', undefined);
      await seen('GET', '/api/system/settings', '/api/system/settings', admin.token);
      await seen('GET', '/api/system/config', '/api/system/config', admin.token);
      // auth and profile
      const reader = await register(call);
      const l = await login(call, reader.username, PASSWORD);
      mismatches.push(...check('POST', '/api/auth/login', l));
      const reg = await call('POST', '/api/auth/register', { body: { email: `x${reader.username}@example.com`, username: `x${reader.username}`, password: PASSWORD } });
      mismatches.push(...check('POST', '/api/auth/register', reg));
      await seen('GET', '/api/auth/profile', '/api/auth/profile', reader.token);
      await seen('PUT', '/api/auth/theme', '/api/auth/theme', reader.token, { theme: 'light' });
      await seen('GET', '/api/auth/sessions', '/api/auth/sessions', reader.token);
      await seen('GET', '/api/auth/opds-key', '/api/auth/opds-key', reader.token);
      // admin
      await seen('GET', '/api/auth/users', '/api/auth/users', admin.token);
      await seen('GET', '/api/auth/users/{user_id}/libraries', `/api/auth/users/${reader.id}/libraries`, admin.token);
      await seen('GET', '/api/admin/projections', '/api/admin/projections', admin.token);
      await seen('GET', '/api/admin/parked-events', '/api/admin/parked-events', admin.token);
      await seen('GET', '/api/admin/hash-conflicts', '/api/admin/hash-conflicts', admin.token);
      // libraries and media items
      const s = await shelf(call, 'Openapi shelf', ['Alpha', 'Beta'], admin);
      const item = s.items[0]!.id as string;
      await seen('GET', '/api/libraries', '/api/libraries', reader.token);
      await seen('GET', '/api/libraries', '/api/libraries', admin.token);
      await seen('GET', '/api/libraries/{id}', `/api/libraries/${s.library.id}`, admin.token);
      await seen('GET', '/api/scanner/status', '/api/scanner/status', admin.token);
      await seen('GET', '/api/media-items', `/api/media-items?library_id=${s.library.id}`, reader.token);
      await seen('GET', '/api/media-items/{id}', `/api/media-items/${item}`, reader.token);
      await seen('PUT', '/api/media-items/{id}', `/api/media-items/${item}`, admin.token, { tags: ['x'] });
      // search
      await seen('GET', '/api/media-items/search', '/api/media-items/search?q=Alpha', reader.token);
      // progress
      await seen('PUT', '/api/media-items/{id}/progress', `/api/media-items/${item}/progress`, reader.token, { percentage: 0.25 });
      await seen('GET', '/api/media-items/{id}/progress', `/api/media-items/${item}/progress`, reader.token);
      await seen('GET', '/api/progress-conflicts', '/api/progress-conflicts', reader.token);
      // browsing by series and author (the reader's position in the series)
      await seen('PUT', '/api/media-items/{id}', `/api/media-items/${item}`, admin.token, { series: 'Openapi Saga', series_index: 1 });
      const series = await seen('GET', '/api/series', '/api/series', reader.token);
      expect(series.json.data.map((x: { name: string }) => x.name)).toContain('Openapi Saga');
      const one = await seen('GET', '/api/series/{name}', `/api/series/${encodeURIComponent('Openapi Saga')}`, reader.token);
      expect(one.json.data[0].percentage).toBe(0.25);
      await seen('GET', '/api/authors', '/api/authors', reader.token);
      // annotations and ratings
      await seen('POST', '/api/media-items/{id}/bookmarks', `/api/media-items/${item}/bookmarks`, reader.token, { position: { percentage: 0.25 }, note: 'here' });
      await seen('GET', '/api/media-items/{id}/bookmarks', `/api/media-items/${item}/bookmarks`, reader.token);
      await seen('PUT', '/api/media-items/{id}/rating', `/api/media-items/${item}/rating`, reader.token, { rating: 4 });
      // collections, saved filters, dashboard
      await seen('GET', '/api/collections', '/api/collections', reader.token);
      const c = await seen('POST', '/api/collections', '/api/collections', reader.token, { name: 'Openapi' });
      await seen('POST', '/api/collections/{id}/items', `/api/collections/${c.json.id}/items`, reader.token, { media_item_ids: [item] });
      await seen('GET', '/api/collections/{id}/items', `/api/collections/${c.json.id}/items`, reader.token);
      await seen('POST', '/api/saved-filters', '/api/saved-filters', reader.token, { name: 'f', resource_type: 'media_items', filter: { q: 'a' } });
      await seen('GET', '/api/dashboard/sections', '/api/dashboard/sections', reader.token);
      await seen('GET', '/api/dashboard/preferences', '/api/dashboard/preferences', reader.token);
      // devices
      const pending = await registerDevice(call, 'Openapi reader');
      await seen('POST', '/api/devices/register/status', '/api/devices/register/status', undefined, { device_code: pending.device_code });
      await seen('GET', '/api/devices/pending/{id}', `/api/devices/pending/${pending.user_code}`, reader.token);
      const d = await enroll(call, reader, 'Openapi device');
      await seen('GET', '/api/devices', '/api/devices', reader.token);
      await seen('GET', '/api/devices/{id}', `/api/devices/${d.device_id}`, reader.token);
      await seen('GET', '/api/devices/{id}/shelves', `/api/devices/${d.device_id}/shelves`, reader.token);
      await seen('GET', '/api/sync-queue/stats', '/api/sync-queue/stats', reader.token);
      await seen('GET', '/api/sync/device', '/api/sync/device', undefined, undefined, { authorization: `Device ${d.token}` });
      await seen('GET', '/api/sync/koreader/library', '/api/sync/koreader/library', undefined, undefined, { authorization: `Device ${d.token}` });
      // kosync (the stock KOReader sync)
      await seen('GET', '/api/kosync/healthcheck', '/api/kosync/healthcheck', undefined);
      const kosync = { 'x-auth-user': reader.username, 'x-auth-key': createHash('md5').update(PASSWORD).digest('hex') };
      await seen(
        'PUT',
        '/api/kosync/syncs/progress',
        '/api/kosync/syncs/progress',
        undefined,
        { document: 'abc123', percentage: 0.5, progress: '/body/DocFragment[3]', device: 'kr' },
        kosync,
      );
      await seen('GET', '/api/kosync/syncs/progress/{document}', '/api/kosync/syncs/progress/abc123', undefined, undefined, kosync);
      await seen('GET', '/api/kosync/documents', '/api/kosync/documents', reader.token);

      expect(mismatches).toEqual([]);
    });

    it('catches an answer that does not fit its declared schema', async () => {
      const r = await call('GET', '/api/auth/profile', { token: admin.token });
      expect(check('GET', '/api/auth/profile', r)).toEqual([]);
      // the same answer against a document that says usernames are numbers
      const wrong = structuredClone(doc);
      const schema = declared(wrong, 'GET', '/api/auth/profile', 200) as { properties: Record<string, object> };
      schema.properties.username = { type: 'number' };
      expect(checker(wrong)('GET', '/api/auth/profile', r)).toEqual(['GET /api/auth/profile 200: /username must be number']);
      // and an answer with a field of the wrong type against the real document
      expect(check('GET', '/api/auth/profile', { ...r, json: { ...r.json, role: 7 } }).length).toBeGreaterThan(0);
    });
  });
}
