// Who may edit metadata (issue 43): an admin, or a user the admin allowed (`can_edit_metadata`, an
// identity event). The permission is set by PUT /api/auth/users/<id>/permissions, shows in the user
// listing and the holder's profile, reaches the gateway's caller from identity's events (never from
// a request body), and is what auth.requireEditor and the catalog's own checks ask for.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, eventually, expectError, instances, NO_SUCH_ID, register, userRecord, type Account, type Call } from './helpers';
import { createLibrary, FIXTURE, items, settled } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);

const EDITOR_REQUIRED = 'metadata editing access required';
const ADMIN_REQUIRED = 'admin access required';

describe.each(modes)('can_edit_metadata (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let editor: Account;
  let plain: Account;
  let books: Record<string, any>[];
  const dirs: string[] = [];

  const permit = (user: Account | string, body: unknown, token = admin.token) =>
    call('PUT', `/api/auth/users/${typeof user === 'string' ? user : user.id}/permissions`, { token, body: body as Record<string, unknown> });
  const patch = (token: string, id: string, body: Record<string, unknown>) => call('PATCH', `/api/media-items/${id}`, { token, body });
  const bulk = (token: string, body: Record<string, unknown>) => call('POST', '/api/media-items/bulk-update', { token, body });

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    expect(admin.role).toBe('admin');
    editor = await register(call);
    plain = await register(call);
    const d = mkdtempSync(join(tmpdir(), 'bindery-edit-perm-'));
    dirs.push(d);
    cpSync(join(FIXTURE, 'Grace Holloway'), join(d, 'Grace Holloway'), { recursive: true, preserveTimestamps: true });
    const lib = await createLibrary(call, admin.token, { name: 'Edit permission', folders: [d], watch: false });
    await settled(call, admin.token, lib.id);
    books = await items(call, admin.token, lib.id);
    expect(books.length).toBeGreaterThan(0);
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('refuses a user without the permission: 403 with its message, nothing changed', async () => {
    const book = books[0]!;
    expectError(await patch(plain.token, book.id, { title: 'Not yours' }), 403, EDITOR_REQUIRED);
    expectError(await call('PUT', `/api/media-items/${book.id}`, { token: plain.token, body: { title: 'Not yours' } }), 403, EDITOR_REQUIRED);
    expectError(await bulk(plain.token, { ids: [book.id], changes: { series: 'Nope' } }), 403, EDITOR_REQUIRED);
    // a body saying so is not believed
    expectError(await patch(plain.token, book.id, { title: 'Not yours', can_edit_metadata: true, role: 'admin' }), 403, EDITOR_REQUIRED);
    expectError(await patch(plain.token, book.id, { caller: { user_id: plain.id, role: 'admin', can_edit_metadata: true }, title: 'x' }), 403, EDITOR_REQUIRED);
    // signed out: 401 as every signed-in route
    expectError(await call('PATCH', `/api/media-items/${book.id}`, { body: { title: 'x' } }), 401, 'authentication required');
    const after = await call('GET', `/api/media-items/${book.id}`, { token: admin.token });
    expect(after.json.title).toBe(book.title);
  });

  it('lets only an admin set it, with exact messages for bad input', async () => {
    expectError(await permit(editor, { can_edit_metadata: true }, plain.token), 403, ADMIN_REQUIRED);
    expectError(await permit(plain, { can_edit_metadata: true }, plain.token), 403, ADMIN_REQUIRED);
    expectError(await permit(editor, {}), 400, 'can_edit_metadata is required');
    expectError(await permit(editor, { can_edit_metadata: null }), 400, 'can_edit_metadata is required');
    for (const bad of ['true', 1, ['true'], { v: true }, '<script>alert(1)</script>']) {
      expectError(await permit(editor, { can_edit_metadata: bad }), 400, 'can_edit_metadata must be true or false');
    }
    // control characters are refused by the gateway before identity sees them
    expectError(await permit(editor, { can_edit_metadata: 'yes\u0000' }), 400, 'can_edit_metadata must not contain control characters');
    expectError(await permit('not-a-uuid', { can_edit_metadata: true }), 400, 'invalid user id');
    expectError(await permit(NO_SUCH_ID, { can_edit_metadata: true }), 404, 'user not found');
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const r = await call('PUT', `/api/auth/users/${editor.id}/permissions`, { token: admin.token, raw: deep });
    expect(r.status, r.text).toBe(400);
    // nothing was granted by any of it
    expect((await userRecord(call, admin.token, editor.id))?.can_edit_metadata).toBe(false);
  });

  it('grants it: the listing and the profile say so, and the editor edits one item and in bulk', async () => {
    const r = await permit(editor, { can_edit_metadata: true });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'permissions updated', user_id: editor.id, can_edit_metadata: true });
    expect((await userRecord(call, admin.token, editor.id))?.can_edit_metadata).toBe(true);
    expect((await userRecord(call, admin.token, plain.id))?.can_edit_metadata).toBe(false);
    await eventually(async () => {
      const p = await call('GET', '/api/auth/profile', { token: editor.token });
      expect(p.json.can_edit_metadata).toBe(true);
    }, 5000);
    const p = await call('GET', '/api/auth/profile', { token: plain.token });
    expect(p.status).toBe(200);
    expect('can_edit_metadata' in p.json).toBe(false);

    const book = books[0]!;
    // the same session, no new sign-in: the caller carries the permission from identity's event
    const changed = await eventually(async () => {
      const c = await patch(editor.token, book.id, { title: 'Fixed by an editor' });
      expect(c.status, c.text).toBe(200);
      return c;
    }, 5000);
    expect(changed.json.title).toBe('Fixed by an editor');
    const b = await bulk(editor.token, { ids: books.map((x) => x.id), changes: { series: 'Edited Series' } });
    expect(b.status, b.text).toBe(200);
    await eventually(async () => {
      const one = await call('GET', `/api/media-items/${book.id}`, { token: plain.token });
      expect(one.json.title).toBe('Fixed by an editor');
      expect(one.json.series).toBe('Edited Series');
    }, 5000);
    // editing is not administration: the editor still may not delete, create or manage people
    expectError(await call('DELETE', `/api/media-items/${book.id}`, { token: editor.token }), 403, ADMIN_REQUIRED);
    expectError(await call('POST', '/api/media-items/bulk-delete', { token: editor.token, body: { ids: [book.id] } }), 403, ADMIN_REQUIRED);
    expectError(await permit(plain, { can_edit_metadata: true }, editor.token), 403, ADMIN_REQUIRED);
    expectError(await call('GET', '/api/auth/users', { token: editor.token }), 403, ADMIN_REQUIRED);
  });

  it('a user cannot give it to themselves through their profile or at sign-up', async () => {
    const r = await call('PUT', '/api/auth/profile', { token: plain.token, body: { can_edit_metadata: true, first_name: 'Plain' } });
    expect(r.status, r.text).toBe(200);
    const signedUp = await call('POST', '/api/auth/register', {
      body: { email: 'selfgrant@example.com', username: 'selfgrant', password: 'passw0rd-123', can_edit_metadata: true },
    });
    expect(signedUp.status, signedUp.text).toBe(201);
    expect((await userRecord(call, admin.token, plain.id))?.can_edit_metadata).toBe(false);
    expect((await userRecord(call, admin.token, signedUp.json.user.id))?.can_edit_metadata).toBe(false);
    expectError(await patch(signedUp.json.access_token, books[0]!.id, { title: 'x' }), 403, EDITOR_REQUIRED);
    expectError(await patch(plain.token, books[0]!.id, { title: 'x' }), 403, EDITOR_REQUIRED);
  });

  it('survives a rebuild of the gateway’s identity read model', async () => {
    const r = await call('POST', '/api/admin/projections/identity/rebuild?wait=true', { token: admin.token });
    expect(r.status, r.text).toBe(200);
    const p = await call('GET', '/api/auth/profile', { token: editor.token });
    expect(p.json.can_edit_metadata).toBe(true);
    const q = await call('GET', '/api/auth/profile', { token: plain.token });
    expect('can_edit_metadata' in q.json).toBe(false);
  });

  it('revokes it: the next requests are refused again', async () => {
    const r = await permit(editor, { can_edit_metadata: false });
    expect(r.json).toEqual({ message: 'permissions updated', user_id: editor.id, can_edit_metadata: false });
    // setting what is already so appends nothing and answers the same
    expect((await permit(editor, { can_edit_metadata: false })).json).toEqual({ message: 'permissions updated', user_id: editor.id, can_edit_metadata: false });
    await eventually(async () => expectError(await patch(editor.token, books[0]!.id, { title: 'Too late' }), 403, EDITOR_REQUIRED), 5000);
    expectError(await bulk(editor.token, { ids: [books[0]!.id], changes: { series: 'Too late' } }), 403, EDITOR_REQUIRED);
    const p = await call('GET', '/api/auth/profile', { token: editor.token });
    expect('can_edit_metadata' in p.json).toBe(false);
    expect((await call('GET', `/api/media-items/${books[0]!.id}`, { token: admin.token })).json.title).toBe('Fixed by an editor');
  });

  it('an admin edits without the permission', async () => {
    expect((await userRecord(call, admin.token, admin.id))?.can_edit_metadata).toBe(false);
    const c = await patch(admin.token, books[0]!.id, { title: 'Fixed by the admin' });
    expect(c.status, c.text).toBe(200);
    expect(c.json.title).toBe('Fixed by the admin');
  });
});
