// Shared pieces of the reading end-to-end tests: an admin, readers, and a few items made through
// the API in a library of its own (no scan needed).
import { expect } from 'vitest';
import { emptyDir } from './catalog-helpers';
import { register, type Account, type Call } from './helpers';

export interface Shelf {
  admin: Account;
  library: Record<string, any>;
  items: Record<string, any>[];
}

export async function makeItem(call: Call, admin: Account, libraryId: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  const r = await call('POST', '/api/media-items', { token: admin.token, body: { library_id: libraryId, ...body } });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** An admin (the first account of the instance or a new one made by `admin`), a library and items. */
export async function shelf(call: Call, name: string, titles: (string | Record<string, unknown>)[], admin?: Account): Promise<Shelf> {
  admin ??= await register(call);
  const lr = await call('POST', '/api/libraries', { token: admin.token, body: { name, folders: [emptyDir()], watch: false } });
  expect(lr.status, lr.text).toBe(201);
  const items = [];
  for (const t of titles) items.push(await makeItem(call, admin, lr.json.id, typeof t === 'string' ? { title: t, authors: ['A. Writer'] } : t));
  return { admin, library: lr.json, items };
}

export const put = (call: Call, token: string, itemId: string, body: Record<string, unknown>) => call('PUT', `/api/media-items/${itemId}/progress`, { token, body });
