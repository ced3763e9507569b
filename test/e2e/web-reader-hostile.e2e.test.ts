// A book is hostile content (issue 41): EPUBs whose chapters carry every kind of active payload are
// opened in the web reader by an administrator in headless Chromium. Each payload tries to act with
// the reader's session: htmx or the reader's own bundle loaded from Bindery's assets, inline scripts,
// event handlers, SVG scripts and animations, frames and objects, forms, meta refresh, `base`, and
// `javascript:` links. Nothing may run, no request may leave the reader with the session, nothing on
// the server may change, and the chapter's text must still show.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Frame, Page } from 'playwright-core';
import type { Bindery } from '../support/bindery';
import { createLibrary, emptyDir, items, scan } from './catalog-helpers';
import { api, instances, register, type Account, type Call } from './helpers';
import { smallEpub, storedZip } from './kobo-helpers';
import { CHROMIUM, HAS_CHROMIUM, launch, openAs, PAGE_MODES } from './web-browser';

declare const document: any;
declare const window: any;

const get = instances(PAGE_MODES);
if (!HAS_CHROMIUM) describe.skip(`hostile books in the web reader (${CHROMIUM} is absent: apt-get install -y chromium)`, () => it('needs Chromium', () => undefined));

let browser: Browser;
beforeAll(async () => {
  if (HAS_CHROMIUM) browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

/** Marks the frame's document: present only if a payload's script ran. */
const PWN = (how: string) => `document.documentElement.setAttribute('data-pwned','${how}')`;
/** A write a running script would make with the session (JSON passes the old same-site proof). */
const WRITE = (name: string) =>
  `fetch('/api/collections',{method:'POST',credentials:'include',headers:{'Content-Type':'application/json','X-Requested-With':'x'},body:JSON.stringify({name:'${name}'})})`;

interface Payload {
  kind: string;
  /** the chapter's body after its harmless sentence */
  body: (ctx: Ctx) => string;
  /** extra elements of the chapter's head */
  head?: (ctx: Ctx) => string;
  /** what a person would click in the chapter (a link, a button) */
  click?: string;
}
interface Ctx {
  url: string;
  htmx: string;
  appJs: string;
  reader: string;
  /** the reader's boot script, which asks for the book named by #reader's data-file as it runs */
  boot: string;
  victim: string;
}

const PAYLOADS: Payload[] = [
  {
    kind: 'htmx',
    head: (c) => `<script src="${c.url}${c.htmx}"></script>`,
    body: (c) =>
      `<div hx-post="${c.url}/admin/users" hx-trigger="load" hx-vals='{"email":"mallory@example.com","username":"mallory","password":"mall0ry-passw0rd","role":"admin"}'>a</div>` +
      `<div hx-post="${c.url}/admin/users/${c.victim}/role" hx-trigger="load" hx-vals='{"role":"admin"}'>b</div>` +
      `<div data-hx-post="${c.url}/api/collections" hx-trigger="load" hx-vals='{"name":"pwned-htmx"}'>c</div>` +
      `<div hx-post="/api/auth/opds-key" hx-trigger="load">d</div>`,
  },
  {
    kind: 'own-scripts',
    head: (c) => `<script src="${c.url}${c.appJs}"></script><script type="module" src="${c.url}${c.boot}"></script><script type="module" src="${c.url}${c.reader}"></script>`,
    // run in the book, the boot script would ask for this "file" with the session: the canary
    body: (c) =>
      `<div id="reader" data-kind="pages" data-format="epub" data-file="${c.url}/canary/boot" data-page-count="3" data-item="00000000-0000-4000-8000-000000000000"><div id="pages"></div></div>`,
  },
  {
    kind: 'inline-script',
    head: () => `<script>${PWN('head')};${WRITE('pwned-inline-head')}</script>`,
    body: () => `<script>${PWN('body')};${WRITE('pwned-inline')}</script><script type="text/javascript">//<![CDATA[\n${PWN('cdata')}\n//]]></script>`,
  },
  {
    kind: 'handlers',
    body: () =>
      `<img src="missing.png" alt="x" onerror="${PWN('onerror')};${WRITE('pwned-onerror')}"/>` +
      `<p onclick="${PWN('onclick')}" id="clickme">Click this paragraph.</p>` +
      `<div style="width:10px;height:10px" onmouseover="${PWN('onmouseover')}">m</div>`,
    click: '#clickme',
  },
  {
    kind: 'svg',
    body: () =>
      `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="40" onload="${PWN('svg-onload')}">` +
      `<script type="text/ecmascript">${PWN('svg-script')};${WRITE('pwned-svg')}</script>` +
      `<a id="svglink" xlink:href="javascript:${PWN('svg-link')}"><text x="0" y="20">svg link</text></a>` +
      `<a href="#x"><set attributeName="href" to="javascript:${PWN('svg-set')}"/><text x="0" y="35">set</text></a>` +
      `<foreignObject width="10" height="10"><div xmlns="http://www.w3.org/1999/xhtml"><script>${PWN('foreign')}</script></div></foreignObject></svg>`,
    click: '#svglink',
  },
  {
    kind: 'frames',
    body: (c) =>
      `<iframe srcdoc="&lt;script&gt;parent.${PWN('srcdoc')};${WRITE('pwned-srcdoc').replace(/'/g, '&apos;')}&lt;/script&gt;"></iframe>` +
      `<iframe src="data:text/html,%3Cscript%3Ealert(1)%3C/script%3E"></iframe>` +
      `<iframe src="${c.url}/admin/users"></iframe>` +
      `<object data="${c.url}/canary/object" type="text/html"></object>` +
      `<embed src="${c.url}/canary/embed" type="text/html"/>`,
  },
  {
    kind: 'forms',
    body: (c) =>
      `<form method="post" action="${c.url}/api/collections"><input name="name" value="pwned-form"/><button id="go" type="submit">Continue</button></form>` +
      `<button form="f2" formaction="${c.url}/canary/formaction" formmethod="post" id="go2">Go on</button>`,
    click: '#go',
  },
  {
    kind: 'refresh-base',
    head: (c) => `<meta http-equiv="refresh" content="0;url=${c.url}/canary/meta-refresh"/><base href="${c.url}/canary/base/"/>`,
    body: () => `<img src="base-relative.png" alt="relative"/>`,
  },
  {
    kind: 'javascript-links',
    body: () =>
      `<a id="jslink" href="javascript:${PWN('link')};${WRITE('pwned-link')}">Read on</a> <a href="vbscript:msgbox(1)">vb</a> <a href="  JaVaScRiPt:${PWN('spaced')}">spaced</a>`,
    click: '#jslink',
  },
];

const SENTENCE = (kind: string) => `A harmless sentence about ${kind}.`;
const x = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** An EPUB 3 whose only chapter holds the payload after a harmless sentence. */
function hostileEpub(p: Payload, c: Ctx): Buffer {
  const title = `Hostile ${p.kind}`;
  return storedZip([
    ['mimetype', 'application/epub+zip'],
    [
      'META-INF/container.xml',
      '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    ],
    [
      'OEBPS/content.opf',
      `<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="uid">urn:uuid:hostile-${p.kind}</dc:identifier><dc:title>${x(title)}</dc:title><dc:creator>Mallory</dc:creator><dc:language>en</dc:language><meta property="dcterms:modified">2024-01-01T00:00:00Z</meta></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml" properties="scripted svg"/></manifest><spine><itemref idref="c1"/></spine></package>`,
    ],
    [
      'OEBPS/nav.xhtml',
      '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Nav</title></head><body><nav epub:type="toc"><ol><li><a href="c1.xhtml">One</a></li></ol></nav></body></html>',
    ],
    [
      'OEBPS/c1.xhtml',
      `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${x(title)}</title>${p.head?.(c) ?? ''}</head><body><h1>${x(title)}</h1><p>${SENTENCE(p.kind)}</p>${p.body(c)}</body></html>`,
    ],
  ]);
}

/** The frame showing `text` (foliate's frames sit in a closed shadow root; Playwright sees them all). */
async function frameWith(page: Page, text: string): Promise<Frame> {
  for (let i = 0; i < 100; i++) {
    for (const f of page.frames()) {
      if (f === page.mainFrame()) continue;
      if (await f.evaluate((s) => Boolean(document.body?.textContent?.includes(s)), text).catch(() => false)) return f;
    }
    await page.waitForTimeout(150);
  }
  throw new Error(`no frame shows “${text}”`);
}

for (const mode of PAGE_MODES) {
  describe.skipIf(!HAS_CHROMIUM)(`hostile books in the web reader (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let admin: Account;
    let victim: Account;
    const books = new Map<string, string>();
    beforeAll(async () => {
      b = await get(mode);
      call = api(b);
      admin = await register(call);
      victim = await register(call, { caller: admin.token });
      // the assets' names, as an attacker reads them from any page of a release
      const page = await call('GET', '/login');
      const asset = (name: string) => new RegExp(`/assets/${name}\\.[\\w-]{12}\\.js`).exec(page.text)?.[0];
      // the reader's bundle, named on a reader page of a harmless book
      const plain = emptyDir();
      writeFileSync(join(plain, 'plain.epub'), smallEpub('Plain', 'Someone', 'plain-book'));
      const first = await createLibrary(call, admin.token, { name: `Plain ${mode}`, folders: [plain], watch: false });
      await scan(call, admin.token, first.id);
      const [one] = await items(call, admin.token, first.id);
      const readerPage = await call('GET', `/read/${one!.id}`, { cookie: `token=${admin.token}` });
      expect(readerPage.status).toBe(200);
      const ctx: Ctx = {
        url: b.url,
        htmx: asset('htmx')!,
        appJs: asset('app')!,
        reader: /\/assets\/reader\.[\w-]{12}\.js/.exec(readerPage.text)![0],
        boot: /\/assets\/reader-boot\.[\w-]{12}\.js/.exec(readerPage.text)![0],
        victim: victim.id,
      };
      expect(ctx.htmx).toBeDefined();
      expect(ctx.appJs).toBeDefined();
      const dir = emptyDir();
      for (const p of PAYLOADS) {
        mkdirSync(join(dir, p.kind), { recursive: true });
        writeFileSync(join(dir, p.kind, `${p.kind}.epub`), hostileEpub(p, ctx));
      }
      const lib = await createLibrary(call, admin.token, { name: `Hostile ${mode}`, folders: [dir], watch: false });
      await scan(call, admin.token, lib.id);
      for (const i of await items(call, admin.token, lib.id)) books.set(String(i.title).replace(/^Hostile /, ''), i.id);
      expect([...books.keys()].sort()).toEqual(PAYLOADS.map((p) => p.kind).sort());
    }, 240_000);

    it.each(PAYLOADS.map((p) => [p.kind, p] as const))('%s: nothing runs, nothing leaves with the session, nothing changes; the text shows', async (kind, p) => {
      const before = await call('GET', '/api/auth/opds-key', { token: admin.token });
      const collectionsBefore = (await call('GET', '/api/collections', { token: admin.token })).json.data.length;
      const t = await openAs(browser, b.url, admin.token);
      const requests: string[] = [];
      t.page.on('request', (r) => requests.push(`${r.method()} ${r.url()}`));
      await t.page.goto(`${b.url}/read/${books.get(kind)}`);
      await t.page.waitForSelector('#reader[data-ready="true"]', { timeout: 30_000 });
      const frame = await frameWith(t.page, SENTENCE(kind));
      if (p.click) await frame.click(p.click, { timeout: 5_000 }).catch(() => undefined);
      await frame.hover('body').catch(() => undefined);
      // time for anything a payload set off (htmx's load triggers, a refresh, a submitted form)
      await t.page.waitForTimeout(1_500);

      // no request left the reader for a payload: no canary, no unsafe method at all (nothing moved)
      expect(
        requests.filter((r) => r.includes('/canary/') || !r.startsWith('GET ')),
        `${kind}: requests made by the book`,
      ).toEqual([]);
      expect(
        requests.filter((r) => /\/assets\/(htmx|app)\.[\w-]{12}\.js/.test(r) || r.includes('/admin/')),
        `${kind}: the book loaded our code or pages`,
      ).toEqual([]);

      // and nothing changed on the server
      const people = await call('GET', '/api/auth/users', { token: admin.token });
      expect(people.status).toBe(200);
      expect(people.json.map((u: { username: string }) => u.username)).not.toContain('mallory');
      expect((await call('GET', '/api/auth/profile', { token: victim.token })).json.role).toBe('user');
      const after = await call('GET', '/api/collections', { token: admin.token });
      expect(after.json.data.map((c: { name: string }) => c.name).filter((n: string) => n.startsWith('pwned'))).toEqual([]);
      expect(after.json.data.length).toBe(collectionsBefore);
      expect((await call('GET', '/api/auth/opds-key', { token: admin.token })).json).toEqual(before.json);
      // nothing ran in any frame of the reader: no mark, no htmx, no reader of its own
      for (const f of t.page.frames()) {
        const ran = await f
          .evaluate(() => ({
            mark: document.documentElement?.getAttribute('data-pwned') ?? null,
            htmx: typeof window.htmx !== 'undefined',
            // the boot script's requests, left on the page it ran in (the reader's own takes them over)
            boot: typeof window.binderyReaderEarly !== 'undefined',
          }))
          .catch(() => ({ mark: null, htmx: false, boot: false }));
        expect(ran, `${kind}: a script ran in ${f.url().slice(0, 60)}`).toEqual({ mark: null, htmx: false, boot: false });
      }
      // the chapter as shown holds no active content (sanitized before display), only its text
      const shown = await frameWith(t.page, SENTENCE(kind));
      const active = await shown.evaluate(() => {
        const found: string[] = [];
        for (const el of document.querySelectorAll('*')) {
          const name = el.localName;
          if (['script', 'iframe', 'frame', 'object', 'embed', 'form', 'base', 'set', 'animate', 'noscript'].includes(name)) found.push(name);
          if (name === 'meta' && el.getAttribute('http-equiv')) found.push('meta http-equiv');
          for (const a of el.attributes) {
            const v = a.value.replace(/[\s\u0000-\u001f]+/g, '').toLowerCase();
            if (/^on/i.test(a.name) || /^(data-)?hx-/i.test(a.name) || a.name === 'formaction' || v.startsWith('javascript:') || v.startsWith('vbscript:'))
              found.push(`${name}[${a.name}]`);
          }
        }
        return found;
      });
      expect(active, `${kind}: active content left in the chapter`).toEqual([]);
      expect(await shown.evaluate(() => document.body.textContent)).toContain(SENTENCE(kind));

      await t.ctx.close();
    });
  });
}
