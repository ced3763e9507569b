// The web app: server-rendered pages (preact to HTML) with htmx, mounted by the gateway with
// webRoutes(app). Pages read through the gateway's own /api routes in-process (api.ts) and add no
// rule of their own; writes are htmx requests straight to /api, carrying the session's CSRF token
// from the page's <meta name="csrf-token"> (app.js adds it), the proof a cookie-authenticated write needs.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { VNode } from 'preact';
import { apiFor, type Api } from './api';
import { loadAssets, type Assets } from './assets';
import { csrfOf, isHtmx, localTarget, loginFor, readerCsp, redirectTo, renderHtml, securityHeaders, sendHtml, sendRendered, useCsrf } from './http';
import { Layout, type Live, mayEdit, NotFound, type Render, type RenderKept, type Viewer } from './layout';
import { FirstRun, SignIn } from './pages/auth';
import { AdminLibraries, type Browse, FolderBrowser, type LibraryRow } from './pages/admin-libraries';
import { calibreSections } from './calibre-sections';
import { AdminSystem, type ProjectionRow, type Setting } from './pages/admin-system';
import { type Annotation, Annotations } from './pages/annotations';
import { Book, type Collection, CollectionPicker, type Progress } from './pages/book';
import type { Item } from './pages/books';
import { CollectionPage, type CollectionRow, Collections } from './pages/collections';
import type { LibraryChoice } from './pages/smart-collection';
import { Dashboard, type Section } from './pages/dashboard';
import { apiUrl, Books, Library, LibraryPages, LoadMore, libraryQuery, PAGE, SUGGEST, Suggestions } from './pages/library';
import { Profile, type ProfileData } from './pages/profile';
import type { ProgressConflict } from './pages/progress-conflicts';
import { type ReadPosition, Reader } from './pages/reader';
import { offlineRoutes } from './offline-routes';
import { type Access, AdminUsers, type LibraryName, type UserRow } from './pages/admin-users';
import { adminUserActions } from './admin-users-routes';
import { action, field } from './actions';
import { type CollectionName, type DeviceDetail, type DeviceRow, Devices, type QueueRow, type Shelf } from './pages/devices';
import { deviceActions } from './devices-routes';
import { Approve, MISSING, type Pending } from './pages/approve';
import { approveActions } from './approve-routes';
import { adminMoreRoutes } from './admin-more-routes';
import { mailRoutes } from './mail-routes';
import { uploadRoutes } from './upload-routes';
import { UploadDrop } from './pages/upload';
import { libraryRoutes } from './library-routes';
import { editRoutes } from './edit-routes';
import { ssoConfig, ssoRoutes } from './sso-routes';

export { CSP, localTarget, readerCsp } from './http';
export { schemeOf } from './theme';

export interface WebDeps {
  /** the assets to serve (tests); read from disk once when absent */
  assets?: Assets;
  /** this server's address for the request, to show people what to type elsewhere (null: the page fills it in) */
  origin?: (req: FastifyRequest) => string | null;
  /** the CSRF token of the session the request's cookie holds (without it, the pages take no write) */
  csrf?: (req: FastifyRequest) => Promise<string | null>;
  /** this server mails (SMTP_URL): the pages offer sending books to e-readers */
  mail?: boolean;
}

export interface PageContext {
  req: FastifyRequest;
  reply: FastifyReply;
  api: Api;
  viewer: Viewer;
  assets: Assets;
}

export function webRoutes(app: FastifyInstance, deps: WebDeps = {}): void {
  const assets = deps.assets ?? loadAssets();
  if (deps.csrf) useCsrf(app, deps.csrf);

  app.get('/assets/:file', (req, reply) => {
    const path = req.url.split('?')[0]!;
    // the reader's bundle is made on first use: another instance may have shown its name first
    if (path.startsWith('/assets/reader.') && !assets.byPath.has(path)) assets.reader();
    const a = assets.byPath.get(path);
    if (!a) return securityHeaders(reply).code(404).type('text/plain; charset=utf-8').send('not found');
    return reply.header('Cache-Control', 'public, max-age=31536000, immutable').header('X-Content-Type-Options', 'nosniff').type(a.type).send(a.body);
  });

  const viewerOf = async (api: Api): Promise<Viewer | null> => {
    const r = await api<Viewer>('GET', '/api/auth/profile');
    return r.status === 200 ? r.body : null;
  };
  const needsSetup = async (api: Api): Promise<boolean> => (await api<{ needs_setup: boolean }>('GET', '/api/setup/status')).body?.needs_setup === true;

  const render = (reply: FastifyReply, title: string, viewer: Viewer | null, current: string | undefined, body: VNode, status = 200, live?: Live) =>
    sendHtml(
      reply,
      <Layout assets={assets} title={title} viewer={viewer} current={current} live={live}>
        {body}
      </Layout>,
      status,
    );

  const keptPages = new LRUCache<string, string>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (html) => html.length * 2 + 200 });
  const renderKept: RenderKept = (reply, answers, viewer, current, make, live) => {
    const h = createHash('sha256').update(JSON.stringify([viewer, current ?? '', live ?? null]));
    for (const a of answers) h.update('\u0000').update(a ?? '');
    const key = h.digest('base64');
    const hit = keptPages.get(key);
    if (hit !== undefined) return sendRendered(reply, hit);
    const { title, body } = make();
    const html = renderHtml(
      <Layout assets={assets} title={title} viewer={viewer} current={current} live={live}>
        {body}
      </Layout>,
    );
    keptPages.set(key, html);
    return sendRendered(reply, html);
  };

  /** A signed-in page: without a valid session, to sign-in and back; `admin` pages are 404 for others. */
  const page = (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) =>
    app.get(path, async (req, reply) => {
      const api = apiFor(app, req);
      const viewer = await viewerOf(api);
      if (!viewer) return redirectTo(req, reply, loginFor(req));
      viewer.csrf = await csrfOf(app, req);
      if (opts.admin && viewer.role !== 'admin') return render(reply, 'Not found', viewer, undefined, <NotFound />, 404);
      return handler({ req, reply, api, viewer, assets });
    });

  app.get('/', async (req, reply) => {
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    return redirectTo(req, reply, (await viewerOf(api)) ? '/dashboard' : '/login');
  });

  app.get('/setup', async (req, reply) => {
    const api = apiFor(app, req);
    if (!(await needsSetup(api))) return redirectTo(req, reply, '/login');
    return render(reply, 'Welcome', null, undefined, <FirstRun />);
  });

  app.get('/login', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    // `next` is what the device approval page sent before this page existed
    const target = localTarget(q.redirect ?? q.next);
    const api = apiFor(app, req);
    if (await needsSetup(api)) return redirectTo(req, reply, '/setup');
    if (await viewerOf(api)) return redirectTo(req, reply, target);
    return render(reply, 'Sign in', null, undefined, <SignIn redirect={target} sso={await ssoConfig(api)} />);
  });

  page('/dashboard', {}, async ({ reply, api, viewer }) => {
    const r = await api<{ sections: Section[]; hidden_collections: string[] }>('GET', '/api/dashboard/sections?limit=12');
    if (r.status !== 200) return render(reply, 'Home', viewer, '/dashboard', <Failed status={r.status} />, 502);
    // the hidden sections' names, to show them again (the collection list counts every collection's
    // books, uncached: asked only when something is hidden)
    let hidden: { id: string; name: string }[] = [];
    if (r.body.hidden_collections.length > 0) {
      const all = await api<{ data: { id: string; name: string; show_on_dashboard: boolean }[] }>('GET', '/api/collections');
      if (all.status === 200) hidden = all.body.data.filter((c) => c.show_on_dashboard && r.body.hidden_collections.includes(c.id));
    }
    return render(reply, 'Home', viewer, '/dashboard', <Dashboard sections={r.body.sections} hidden={hidden} username={viewer.username} />, 200, {
      topic: 'progress',
      refresh: '#sections',
    });
  });

  // The library page, the app's most frequent, is kept as rendered for each caller, query and exact
  // API answer: the same answer to the same viewer renders the same HTML, so a repeat skips parsing
  // and rendering (a changed book, position or access changes the answer, and so the key).
  const libraryPages = new LRUCache<string, string>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (html) => html.length * 2 + 200 });
  page('/library', {}, async ({ req, reply, api, viewer }) => {
    const q = libraryQuery(req.query as Record<string, unknown>);
    const [r, libs] = await Promise.all([api<{ data: Item[]; total: number; error?: string }>('GET', apiUrl(q)), api<LibraryName[]>('GET', '/api/libraries')]);
    const libraries = libs.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : [];
    // a library the caller may not see is not there for them
    if (q.library && libs.status === 200 && !libraries.some((l) => l.id === q.library)) return render(reply, 'Not found', viewer, '/library', <NoSuchLibrary />, 404);
    if (r.status === 400) return render(reply, 'Library', viewer, '/library', <Library q={q} items={[]} total={0} libraries={libraries} />);
    if (r.status !== 200) return render(reply, 'Library', viewer, '/library', <Failed status={r.status} />, 502);
    const htmx = isHtmx(req);
    const key = JSON.stringify([
      viewer.id,
      viewer.username,
      viewer.role,
      viewer.can_edit_metadata === true,
      viewer.theme ?? '',
      viewer.csrf ?? '',
      htmx,
      q,
      createHash('sha256')
        .update(r.text ?? '')
        .update(libs.text ?? '')
        .digest('base64'),
    ]);
    const hit = libraryPages.get(key);
    if (hit !== undefined) return sendRendered(reply, hit);
    const items = r.body.data.slice(0, PAGE);
    const total = r.body.total;
    const title = libraries.find((l) => l.id === q.library)?.name ?? 'Library';
    // "Load more" with htmx: the next books for the grid, and the link and pager after them
    const html = htmx
      ? renderHtml(
          <>
            <Books items={items} />
            <LoadMore q={q} total={total} oob />
            <LibraryPages q={q} total={total} oob />
          </>,
          true,
        )
      : renderHtml(
          <Layout assets={assets} title={title} viewer={viewer} current="/library">
            <Library q={q} items={items} total={total} libraries={libraries} editor={mayEdit(viewer)} mail={deps.mail === true} />
            {mayEdit(viewer) && <UploadDrop library={q.library} />}
          </Layout>,
        );
    libraryPages.set(key, html);
    return sendRendered(reply, html);
  });
  // a library's own page is the library narrowed to it
  page('/libraries/:id', {}, async ({ req, reply }) => redirectTo(req, reply, `/library?${new URLSearchParams({ library: (req.params as { id: string }).id.slice(0, 100) })}`));

  // autocomplete for the library's author, series and tag fields: the search API's suggestions
  page('/library/suggest', {}, async ({ req, reply, api }) => {
    const q = req.query as Record<string, unknown>;
    const field = typeof q.field === 'string' && q.field in SUGGEST ? q.field : null;
    if (!field) return sendHtml(reply, <p>unknown field</p>, 400, true);
    const typed = typeof q[field] === 'string' ? (q[field] as string).replace(/^"|"$/g, '').slice(0, 100) : '';
    const key = SUGGEST[field]!;
    const r = await api<{ suggestions?: Record<string, string[]> }>('GET', `/api/media-items/search?${new URLSearchParams({ [key]: typed, limit: '1' })}`);
    return sendHtml(reply, <Suggestions field={field} values={r.status === 200 ? (r.body.suggestions?.[key] ?? []) : []} />, 200, true);
  });

  page('/books/:id/collections', {}, async ({ req, reply, api }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const [item, collections] = await Promise.all([api<Item>('GET', `/api/media-items/${id}`), api<{ data: Collection[] }>('GET', '/api/collections')]);
    if (item.status !== 200) return sendHtml(reply, <div id="collection-picker" />, 404, true);
    return sendHtml(reply, <CollectionPicker item={item.body} collections={collections.status === 200 ? collections.body.data : []} />, 200, true);
  });

  page('/books/:id/annotations', {}, async ({ req, reply, api }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const [hl, notes, deleted] = await Promise.all([
      api<{ data: Annotation[] }>('GET', `/api/media-items/${id}/highlights`),
      api<{ data: Annotation[] }>('GET', `/api/media-items/${id}/notes`),
      api<{ data: Annotation[] }>('GET', `/api/media-items/${id}/annotations/deleted`),
    ]);
    if (hl.status !== 200) return sendHtml(reply, <div id="annotations" />, hl.status === 404 ? 404 : 502, true);
    const live = [...hl.body.data, ...(notes.status === 200 ? notes.body.data : [])].sort((a, b) => (a.position?.percentage ?? 0) - (b.position?.percentage ?? 0));
    return sendHtml(reply, <Annotations live={live} deleted={deleted.status === 200 ? deleted.body.data : []} />, 200, true);
  });

  page('/collections', {}, async ({ reply, api, viewer }) => {
    const r = await api<{ data: CollectionRow[] }>('GET', '/api/collections');
    if (r.status !== 200) return render(reply, 'Collections', viewer, '/collections', <Failed status={r.status} />, 502);
    return render(reply, 'Collections', viewer, '/collections', <Collections collections={r.body.data} />);
  });

  page('/collections/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const [c, items] = await Promise.all([
      api<CollectionRow>('GET', `/api/collections/${id}`),
      api<{ data: { media_item_id: string; item: Item }[] }>('GET', `/api/collections/${id}/items?limit=200`),
    ]);
    if (c.status === 404 || c.status === 400) return render(reply, 'Not found', viewer, undefined, <NotFound />, 404);
    if (c.status !== 200 || items.status !== 200) return render(reply, 'Collection', viewer, '/collections', <Failed status={c.status} />, 502);
    // a smart collection's rule on a library chooses among the libraries the caller may see
    const libs = c.body.rules ? await api<LibraryChoice[]>('GET', '/api/libraries') : null;
    const notice = (req.query as Record<string, unknown>).done === 'rules' ? 'Rules saved.' : undefined;
    return render(
      reply,
      c.body.name,
      viewer,
      '/collections',
      <CollectionPage c={c.body} books={items.body.data} libraries={libs?.status === 200 ? libs.body.map((l) => ({ id: l.id, name: l.name })) : []} notice={notice} />,
    );
  });

  page('/profile', {}, async ({ reply, viewer }) => render(reply, 'Profile', viewer, '/profile', <Profile me={viewer as ProfileData} />));

  page('/admin/libraries', { admin: true }, async ({ reply, api, viewer }) => {
    const [libs, roots] = await Promise.all([api<LibraryRow[]>('GET', '/api/libraries'), api<Browse>('GET', '/api/libraries/browse')]);
    if (libs.status !== 200 || roots.status !== 200) return render(reply, 'Libraries', viewer, '/admin/libraries', <Failed status={libs.status} />, 502);
    const calibre = await calibreSections(api, libs.body, viewer.id);
    return render(reply, 'Libraries', viewer, '/admin/libraries', <AdminLibraries libraries={libs.body} roots={roots.body} calibre={calibre} />, 200, {
      topic: 'scanner',
      refresh: '#libraries',
    });
  });

  page('/devices', {}, async ({ req, reply, api, viewer }) => {
    const [list, colls, key] = await Promise.all([
      api<{ devices: DeviceRow[] }>('GET', '/api/devices'),
      api<{ data: CollectionName[] }>('GET', '/api/collections'),
      api<{ exists: boolean; created_at: string | null }>('GET', '/api/auth/opds-key'),
    ]);
    if (list.status !== 200) return render(reply, 'Devices', viewer, '/devices', <Failed status={list.status} />, 502);
    const titles = new Map<string, string>();
    const devices: DeviceDetail[] = await Promise.all(
      list.body.devices.map(async (device) => {
        const [shelves, queue] = await Promise.all([
          api<{ shelves: Shelf[] }>('GET', `/api/devices/${device.id}/shelves`),
          api<{ entries: QueueRow[] }>('GET', `/api/devices/${device.id}/queue`),
        ]);
        return { device, shelves: shelves.status === 200 ? shelves.body.shelves : [], queue: queue.status === 200 ? queue.body.entries.slice(0, 50) : [] };
      }),
    );
    // the queued books' titles, each looked up once (one the caller may not see stays nameless)
    const ids = [...new Set(devices.flatMap((d) => d.queue.map((q) => q.media_item_id)).filter((x): x is string => x !== null))].slice(0, 100);
    await Promise.all(
      ids.map(async (id) => {
        const r = await api<{ title: string }>('GET', `/api/media-items/${id}`);
        if (r.status === 200) titles.set(id, r.body.title);
      }),
    );
    for (const d of devices) for (const q of d.queue) if (q.media_item_id && titles.has(q.media_item_id)) q.title = titles.get(q.media_item_id)!;
    return render(
      reply,
      'Devices',
      viewer,
      '/devices',
      <Devices
        devices={devices}
        collections={colls.status === 200 ? colls.body.data.map((c) => ({ id: c.id, name: c.name })) : []}
        origin={deps.origin?.(req) ?? ''}
        opdsKey={key.status === 200 ? key.body : { exists: false, created_at: null }}
      />,
    );
  });
  deviceActions(app);

  page('/devices/approve/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const r = await api<Pending & { error?: string }>('GET', `/api/devices/pending/${id}`);
    if (r.status === 404 || r.status === 400)
      return render(
        reply,
        'Device registration',
        viewer,
        '/devices',
        <>
          <h1>Device registration</h1>
          <p id="result" data-outcome="missing">
            {r.status === 404 ? MISSING : (r.body?.error ?? MISSING)}
          </p>
        </>,
        r.status,
      );
    if (r.status !== 200) return render(reply, 'Device registration', viewer, '/devices', <Failed status={r.status} />, 503);
    return render(reply, r.body.status === 'pending' ? 'Approve device' : 'Device registration', viewer, '/devices', <Approve p={r.body} />);
  });
  approveActions(app);

  page('/admin/users', { admin: true }, async ({ req, reply, api, viewer }) => {
    const [users, libs] = await Promise.all([api<UserRow[]>('GET', '/api/auth/users'), api<LibraryName[]>('GET', '/api/libraries')]);
    if (users.status !== 200 || libs.status !== 200) return render(reply, 'People', viewer, '/admin/users', <Failed status={users.status} />, 502);
    const access = new Map<string, Access>();
    await Promise.all(
      users.body.map(async (u) => {
        const a = await api<Access>('GET', `/api/auth/users/${u.id}/libraries`);
        if (a.status === 200) access.set(u.id, a.body);
      }),
    );
    const added = (req.query as Record<string, unknown>).added;
    return render(
      reply,
      'People',
      viewer,
      '/admin/users',
      <AdminUsers users={users.body} access={access} libraries={libs.body} me={viewer.id} {...(typeof added === 'string' && added !== '' ? { added } : {})} />,
    );
  });
  adminUserActions(app);

  page('/admin/system', { admin: true }, async ({ reply, api, viewer }) => {
    const [p, st] = await Promise.all([api<{ data: ProjectionRow[] }>('GET', '/api/admin/projections'), api<{ settings: Setting[] }>('GET', '/api/system/settings')]);
    if (p.status !== 200) return render(reply, 'System', viewer, '/admin/system', <Failed status={p.status} />, 502);
    return render(reply, 'System', viewer, '/admin/system', <AdminSystem projections={p.body.data} settings={st.status === 200 ? (st.body.settings ?? []) : []} />);
  });

  // every setting of the form in one PUT: identity checks each by its type and bounds, and applies none unless all pass
  action(app, '/admin/system/settings', { done: 'settings updated successfully' }, async (a, f) => {
    const known = await a<{ settings: Setting[] }>('GET', '/api/system/settings');
    if (known.status !== 200) return known;
    const settings: Record<string, string> = {};
    for (const s of known.body.settings) {
      const v = f[s.key];
      if (typeof v === 'string') settings[s.key] = v;
    }
    return a('PUT', '/api/system/settings', { settings });
  });

  // the folder browser's next folder, as a fragment (opening a folder also chooses it)
  page('/admin/libraries/browse', { admin: true }, async ({ req, reply, api }) => {
    const path = (req.query as Record<string, unknown>).path;
    const r = await api<Browse & { error?: string }>(
      'GET',
      typeof path === 'string' && path !== '' ? `/api/libraries/browse?${new URLSearchParams({ path })}` : '/api/libraries/browse',
    );
    if (r.status !== 200)
      return sendHtml(
        reply,
        <div id="folder-browser" class="alert alert-error" role="alert">
          {r.body?.error ?? `The folder could not be listed (${r.status}).`}
        </div>,
        200,
        true,
      );
    return sendHtml(reply, <FolderBrowser b={r.body} oob />, 200, true);
  });

  readerPage(app, page, render);
  adminMoreRoutes(app, page, render);
  mailRoutes(app, page, render);
  ssoRoutes(app, page, render, deps.origin);
  uploadRoutes(app, page, render);
  offlineRoutes(app, page, render);

  // a progress conflict settled from the book page: the place to go on from, as the reading service keeps it
  action(app, '/books/:id/conflicts/:conflict', { done: 'conflict resolved', refresh: true }, (a, f, req) =>
    a('POST', `/api/progress-conflicts/${encodeURIComponent((req.params as { conflict: string }).conflict)}/resolve`, { keep: field(f, 'keep') ?? '' }),
  );
  libraryRoutes(app, page, render, renderKept, deps.mail === true);
  editRoutes(app, page, render);

  page('/books/:id', {}, async ({ req, reply, api, viewer }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const r = await api<Item>('GET', `/api/media-items/${id}`);
    if (r.status === 404 || r.status === 400) return render(reply, 'Not found', viewer, undefined, <NotFound />, 404);
    if (r.status !== 200) return render(reply, 'Book', viewer, undefined, <Failed status={r.status} />, 502);
    const [progress, rating, conflicts, ereader] = await Promise.all([
      api<{ progress?: Progress } & Progress>('GET', `/api/media-items/${id}/progress`),
      api<{ rating?: number | null }>('GET', `/api/media-items/${id}/rating`),
      api<{ data: ProgressConflict[] }>('GET', `/api/media-items/${id}/progress-conflicts`),
      // 503 when this server sends no mail: no Send button then
      api<{ address: string }>('GET', '/api/auth/ereader'),
    ]);
    return render(
      reply,
      r.body.title,
      viewer,
      undefined,
      <Book
        item={r.body}
        canEdit={mayEdit(viewer)}
        saved={(req.query as Record<string, unknown>).saved === '1'}
        progress={progress.status === 200 ? (progress.body.progress ?? progress.body) : null}
        rating={rating.status === 200 && typeof rating.body.rating === 'number' ? rating.body.rating : null}
        conflicts={conflicts.status === 200 ? conflicts.body.data : []}
        sendTo={ereader.status === 200 ? ereader.body.address : null}
      />,
      200,
      { topic: 'progress', refresh: '#book-progress', item: r.body.id },
    );
  });
}

function readerPage(app: FastifyInstance, page: (path: string, opts: { admin?: boolean }, handler: (c: PageContext) => Promise<unknown>) => unknown, render: Render) {
  // the reader: the item as the caller may see it (404 otherwise, like the book page) and their position
  page('/read/:id', {}, async ({ req, reply, api, viewer, assets }) => {
    const id = encodeURIComponent((req.params as { id: string }).id);
    const r = await api<Item>('GET', `/api/media-items/${id}`);
    if (r.status === 404 || r.status === 400) return render(reply, 'Not found', viewer, undefined, <NotFound />, 404);
    if (r.status !== 200) return render(reply, 'Reader', viewer, undefined, <Failed status={r.status} />, 502);
    const p = await api<{ progress?: ReadPosition } & ReadPosition>('GET', `/api/media-items/${id}/progress`);
    const progress = p.status === 200 ? (p.body.progress ?? p.body) : null;
    const st = await api<{ all_books: unknown; this_book: unknown }>('GET', `/api/media-items/${id}/reader-settings`);
    const settings = st.status === 200 ? { all_books: st.body.all_books, this_book: st.body.this_book } : null;
    // the reader's own script runs by this response's nonce; nothing else may (a book's chapters inherit this policy)
    const nonce = randomBytes(18).toString('base64');
    return sendHtml(
      reply,
      <Reader assets={assets} reader={assets.reader()} nonce={nonce} viewer={viewer} item={r.body} progress={progress} settings={settings} />,
      200,
      false,
      readerCsp(nonce),
    );
  });
  return app;
}

function NoSuchLibrary() {
  return (
    <>
      <h1>Not found</h1>
      <p id="failure">
        There is no such library. <a href="/library">Back to the library</a>
      </p>
    </>
  );
}

function Failed({ status }: { status: number }) {
  return (
    <>
      <h1>Something went wrong</h1>
      <p id="failure">The server could not answer this page ({status}). Try again in a moment.</p>
    </>
  );
}
