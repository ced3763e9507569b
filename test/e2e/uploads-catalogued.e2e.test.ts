// /uploads serves the files of catalogued items and nothing else from a library folder: not the
// secrets, dot-files and stray files an admin's folder happens to hold (issue: a library set at a
// folder holding the token secret let any user forge an admin token).
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes } from '../support/bindery';
import { api, expectError, instances, register, type Account, type Call } from './helpers';
import { createLibrary, FIXTURE, items, settled, uploadUrl } from './catalog-helpers';

const modes = await availableModes();
const get = instances(modes);

describe.each(modes)('uploads serve catalogued files only (%s)', (mode) => {
  let call: Call;
  let admin: Account;
  let user: Account;
  let lib: Record<string, any>;
  let dir: string;

  beforeAll(async () => {
    call = api(await get(mode));
    admin = await register(call);
    user = await register(call);
    dir = mkdtempSync(join(tmpdir(), 'bindery-secrets-'));
    cpSync(join(FIXTURE, 'Thomas Whitfield'), join(dir, 'Thomas Whitfield'), { recursive: true, preserveTimestamps: true });
    writeFileSync(join(dir, 'jwt-secret'), 'not-a-real-secret-but-it-must-not-leak\n');
    writeFileSync(join(dir, '.env'), 'DATABASE_URL=postgres://secret\n');
    mkdirSync(join(dir, '.ssh'));
    writeFileSync(join(dir, '.ssh', 'id_ed25519'), 'PRIVATE KEY\n');
    writeFileSync(join(dir, 'notes.txt'), 'stray notes\n');
    lib = await createLibrary(call, admin.token, { name: 'Mixed folder', folders: [dir], watch: false });
    await settled(call, admin.token, lib.id);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves the catalogued book and nothing else the folder holds, to users and admins alike', async () => {
    const list = await items(call, admin.token, lib.id);
    expect(list.map((i) => i.file_path)).toEqual(['Thomas Whitfield/the lowercase title.epub']);
    const book = await call('GET', uploadUrl(lib.id, list[0]!.file_path), { token: user.token });
    expect(book.status).toBe(200);
    expect(book.headers.get('content-type')).toBe('application/epub+zip');
    for (const token of [user.token, admin.token]) {
      for (const rel of ['jwt-secret', '.env', '.ssh/id_ed25519', 'notes.txt', 'Thomas Whitfield', 'Thomas Whitfield/']) {
        expectError(await call('GET', uploadUrl(lib.id, rel), { token }), 404, 'file not found');
      }
    }
  });

  it('stops serving a file once its item is deleted', async () => {
    const only = (await items(call, admin.token, lib.id))[0]!;
    expect((await call('DELETE', `/api/media-items/${only.id}`, { token: admin.token })).status).toBe(200);
    expectError(await call('GET', uploadUrl(lib.id, only.file_path), { token: user.token }), 404, 'file not found');
  });
});
