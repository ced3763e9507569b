import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settled } from '../e2e/catalog-helpers';
import { api, register } from '../e2e/helpers';
import { smallEpub } from '../e2e/kobo-helpers';
import { startBindery } from '../support/bindery';
process.env.BINDERY_TEST_ENTRY = 'dist';
const b = await startBindery('embedded');
const call = api(b);
const admin = await register(call);
const dir = mkdtempSync(join(tmpdir(), 'dbg-'));
for (let i = 0; i < 2000; i++) writeFileSync(join(dir, `b${i}.epub`), smallEpub(`Web Book ${i}`, `Author ${i % 211}`, randomUUID()));
const lib = await call('POST', '/api/libraries', { token: admin.token, body: { name: 'x', folders: [dir], watch: false } });
await settled(call, admin.token, lib.json.id, undefined, 600_000);
const headers = { cookie: `token=${admin.token}` };
for (const path of ['/library', '/api/auth/profile', '/api/media-items?limit=51&sort=title', '/library', '/api/media-items?limit=51&sort=title', '/api/auth/profile']) {
  const n = 300;
  const t0 = performance.now();
  let bytes = 0;
  for (let i = 0; i < n; i++) bytes = (await (await fetch(`${b.url}${path}`, { headers })).arrayBuffer()).byteLength;
  console.log(path, ((performance.now() - t0) / n).toFixed(2), 'ms/req', bytes, 'bytes');
}
await b.stop();
