// Books sent to e-reader addresses (issue 47) against a real SMTP server in this process: the book
// arrives as the file it is (same SHA-256), in the best format for the address (a Kindle takes EPUB
// or PDF), within the mail limit; every send is recorded with its status, a transient refusal is
// tried again later (backoff), a final one fails with what the server said; a person sees only their
// own sends and books they may see; identity's log rebuilds the sends row for row.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityMigrations, IDENTITY_SCHEMA, replayIdentityLog, type IdentityDb } from '@bindery/identity';
import { asTables, EventStore, migrate, openPostgres, type NoTables } from '@bindery/platform';
import { buildZip } from '../../services/catalog/test/fixtures/zip-writer';
import { availableModes, startBindery, type Bindery, type Mode } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { api, eventually, expectError as err, register, uniq, type Account, type Call } from './helpers';
import { smallEpub } from './kobo-helpers';
import { LATER_DOMAIN, REFUSING_DOMAIN, sha256, startMailServer, type MailServer } from './mail-helpers';

const NO_ADDRESS = 'set your e-reader address on your profile first';
const AZW3 = join(import.meta.dirname, '../fixtures/corpus40/Aleksandr Petrov/Straße der Ölmühle.azw3');
/** calibre's converter (Debian's calibre): a book a Kindle takes in no format is converted with it */
const CONVERTER = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v ebook-convert'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
})();
const LIMIT = 300_000;

const modes = await availableModes();

for (const mode of modes) {
  describe(`books sent to e-readers (${mode})`, () => {
    let smtp: MailServer;
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let reader: Account;
    let dir: string;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      smtp = await startMailServer();
      b = await startBindery(mode as Mode, { ...smtp.env, MAIL_MAX_ATTACHMENT_BYTES: String(LIMIT) });
      call = api(b);
      admin = await register(call, { name: uniq('chief') });
      dir = emptyDir();
      writeFileSync(join(dir, 'novel.epub'), smallEpub('A Sent Novel', 'Ann Sender', randomUUID()));
      copyFileSync(AZW3, join(dir, 'petrov.azw3'));
      // a comic larger than the limit (its pages are random bytes: nothing compresses)
      writeFileSync(
        join(dir, 'big.cbz'),
        buildZip([
          { name: 'ComicInfo.xml', data: '<?xml version="1.0"?><ComicInfo><Title>Big Comic</Title></ComicInfo>' },
          { name: '001.jpg', data: randomBytes(LIMIT + 50_000) },
        ]),
      );
      const lib = await createLibrary(call, admin.token, { name: 'Sendable', folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      for (const i of await items(call, admin.token, lib.id)) ids[i.formats[0]?.format === 'azw3' ? 'azw3' : i.title] = i.id;
      expect(Object.keys(ids).sort()).toEqual(['A Sent Novel', 'Big Comic', 'azw3']);
      reader = await register(call);
    }, 240_000);
    afterAll(async () => {
      await b?.stop();
      await smtp?.stop();
    });

    const setAddress = async (who: Account, address: string) => {
      const r = await call('PUT', '/api/auth/ereader', { token: who.token, body: { address } });
      expect(r.status, r.text).toBe(200);
    };
    const sends = async (who: Account) => {
      const r = await call('GET', '/api/sends', { token: who.token });
      expect(r.status, r.text).toBe(200);
      return r.json.data as Record<string, any>[];
    };

    it('mails the EPUB to a Kindle address as the file it is, and records the send as sent', async () => {
      err(await call('POST', `/api/media-items/${ids['A Sent Novel']}/send`, { token: reader.token }), 400, NO_ADDRESS);
      const address = `${uniq('reader')}@kindle.com`;
      await setAddress(reader, address);
      const r = await call('POST', `/api/media-items/${ids['A Sent Novel']}/send`, { token: reader.token });
      expect(r.status, r.text).toBe(202);
      expect(r.json.message).toBe(`A Sent Novel is on its way to ${address}`);
      expect(r.json.send).toMatchObject({ item_id: ids['A Sent Novel'], title: 'A Sent Novel', format: 'epub', file_name: 'novel.epub', address, status: 'pending', attempts: 0 });
      const m = await smtp.next(address);
      expect(m.mail.subject).toBe('A Sent Novel');
      expect(m.mail.attachments).toHaveLength(1);
      const a = m.mail.attachments[0]!;
      expect(a.filename).toBe('novel.epub');
      expect(a.contentType).toBe('application/epub+zip');
      expect(sha256(a.content)).toBe(sha256(readFileSync(join(dir, 'novel.epub'))));
      await eventually(async () => expect((await sends(reader))[0]).toMatchObject({ id: r.json.send.id, status: 'sent', attempts: 1, next_attempt_at: null }));
      // the admin sees none of the reader's sends
      expect((await sends(admin)).map((s) => s.id)).not.toContain(r.json.send.id);
    });

    it('refuses what cannot go: no format the address takes, over the mail limit, a book the person may not see, a bad id', async () => {
      await setAddress(reader, `${uniq('reader')}@kindle.com`);
      err(await call('POST', `/api/media-items/${ids['Big Comic']}/send`, { token: reader.token }), 422, 'this book has no format a Kindle takes (EPUB or PDF)');
      await setAddress(reader, `${uniq('reader')}@pocketbook.example`);
      err(await call('POST', `/api/media-items/${ids['Big Comic']}/send`, { token: reader.token }), 413, 'the book is 0.4 MB, more than the 0.3 MB a mail may carry');
      const g = await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: admin.token, body: { all_libraries: false, library_ids: [] } });
      expect(g.status, g.text).toBe(200);
      err(await call('POST', `/api/media-items/${ids['A Sent Novel']}/send`, { token: reader.token }), 404, 'media item not found');
      expect((await call('PUT', `/api/auth/users/${reader.id}/libraries`, { token: admin.token, body: { all_libraries: true } })).status).toBe(200);
      err(await call('POST', '/api/media-items/not-an-id/send', { token: reader.token }), 400, 'invalid media item id');
      err(await call('POST', `/api/media-items/${ids['A Sent Novel']}/send`), 401, 'authentication required');
    });

    it('a server that puts the mail off: tried again later (backoff); one that refuses it: failed, with what it said', async () => {
      const u = await register(call);
      await setAddress(u, `${uniq('later')}@${LATER_DOMAIN}`);
      const later = await call('POST', `/api/media-items/${ids['A Sent Novel']}/send`, { token: u.token });
      expect(later.status, later.text).toBe(202);
      const retry = await eventually(async () => {
        const s = (await sends(u))[0]!;
        expect(s).toMatchObject({ status: 'pending', attempts: 1 });
        return s;
      });
      expect(retry.detail).toContain('451');
      const wait = new Date(retry.next_attempt_at).getTime() - new Date(retry.updated_at).getTime();
      expect(wait).toBeGreaterThanOrEqual(59_000);
      expect(wait).toBeLessThanOrEqual(61_000);
      await setAddress(u, `${uniq('refused')}@${REFUSING_DOMAIN}`);
      const refused = await call('POST', '/api/media-items/send', { token: u.token, body: { media_item_ids: [ids['A Sent Novel'], ids['Big Comic']] } });
      expect(refused.status, refused.text).toBe(200);
      expect(refused.json.message).toBe('1 of 2 books on the way; the book is 0.4 MB, more than the 0.3 MB a mail may carry');
      expect(refused.json.data.map((d: { status: number }) => d.status)).toEqual([202, 413]);
      const failed = await eventually(async () => {
        const s = (await sends(u)).find((x) => x.id === refused.json.data[0].send.id)!;
        expect(s).toMatchObject({ status: 'failed', attempts: 1, next_attempt_at: null });
        return s;
      });
      expect(failed.detail).toContain('550');
      err(await call('POST', '/api/media-items/send', { token: u.token, body: { media_item_ids: [] } }), 400, 'media_item_ids must be a list of 1 to 100 media item ids');
    });

    it.skipIf(!CONVERTER)("converts a book a Kindle takes in no format it has (AZW3) to EPUB with calibre's ebook-convert", { timeout: 240_000 }, async () => {
      const u = await register(call);
      const address = `${uniq('convert')}@kindle.com`;
      await setAddress(u, address);
      const r = await call('POST', `/api/media-items/${ids.azw3}/send`, { token: u.token });
      expect(r.status, r.text).toBe(202);
      expect(r.json.send).toMatchObject({ format: 'epub', convert_from: 'azw3', file_name: 'petrov.epub', status: 'pending' });
      const m = await smtp.next(address, 200_000);
      const a = m.mail.attachments[0]!;
      expect([a.filename, a.contentType]).toEqual(['petrov.epub', 'application/epub+zip']);
      // an EPUB: a ZIP whose first entry is the mimetype
      expect(a.content.subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
      expect(a.content.subarray(30, 38).toString('latin1')).toBe('mimetype');
      expect(a.content.includes('application/epub+zip')).toBe(true);
      await eventually(async () => expect((await sends(u))[0]).toMatchObject({ id: r.json.send.id, status: 'sent', convert_from: 'azw3' }));
    });

    it.skipIf(mode !== 'distributed')("identity's log rebuilds the sends row for row", async () => {
      const database = await openPostgres(b.env.DATABASE_URL!);
      try {
        const db = asTables<IdentityDb, NoTables>(database.db);
        const schema = `identity_sends_replay_${Date.now()}`;
        await migrate(db, schema, identityMigrations);
        await replayIdentityLog(db, new EventStore(db, IDENTITY_SCHEMA), schema);
        const q = (s: string) => sql.raw<Record<string, unknown>>(`select * from ${s}.book_sends order by id`).execute(db);
        const live = (await q(IDENTITY_SCHEMA)).rows;
        expect(live.length).toBeGreaterThanOrEqual(3);
        expect((await q(schema)).rows).toEqual(live);
        await sql.raw(`drop schema ${schema} cascade`).execute(db);
      } finally {
        await database.close();
      }
    });
  });
}
