// The devices page (each device with its shelves and sync queue, the OPDS reader key) and its writes,
// each the API's own route called as the signed-in user.
import type { FastifyInstance } from 'fastify';
import { action, field } from './actions';
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { type DeviceDetail, Devices, KoboAddress, type QueueRow, ReaderKey, type Shelf, SyncKey } from './pages/devices';

const idOf = (req: { params: unknown }, k = 'id') => (req.params as Record<string, string>)[k] ?? '';

export function deviceRoutes({ app, page, render, deps }: Web): void {
  page('/devices', {}, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [list, colls, key] = await Promise.all([api.get('/api/devices'), api.get('/api/collections'), api.get('/api/auth/opds-key')]);
    if (list.status !== 200) return render(reply, t('devices.title'), viewer, '/devices', <Failed status={list.status} />, 502);
    const titles = new Map<string, string>();
    const devices: DeviceDetail[] = await Promise.all(
      list.body.devices.map(async (device) => {
        const [shelves, queue] = await Promise.all([
          api.get('/api/devices/:id/shelves', { params: { id: device.id } }),
          api.get('/api/devices/:id/queue', { params: { id: device.id } }),
        ]);
        return {
          device,
          shelves: shelves.status === 200 ? (shelves.body.shelves as Shelf[]) : [],
          queue: queue.status === 200 ? (queue.body.entries.slice(0, 50) as QueueRow[]) : [],
        };
      }),
    );
    // the queued books' titles, each looked up once (one the caller may not see stays nameless)
    const ids = [...new Set(devices.flatMap((d) => d.queue.map((q) => q.media_item_id)).filter((x): x is string => x !== null))].slice(0, 100);
    await Promise.all(
      ids.map(async (id) => {
        const r = await api.get('/api/media-items/:id', { params: { id } });
        if (r.status === 200) titles.set(id, r.body.title);
      }),
    );
    for (const d of devices) for (const q of d.queue) if (q.media_item_id && titles.has(q.media_item_id)) q.title = titles.get(q.media_item_id)!;
    return render(
      reply,
      t('devices.title'),
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
}

function deviceActions(app: FastifyInstance): void {
  action(app, '/devices/:id/rename', { done: 'device renamed', refresh: true }, (api, f, req) =>
    api.put('/api/devices/:id', { params: { id: idOf(req) }, body: { name: field(f, 'name') ?? '' } }),
  );
  action(app, '/devices/:id/delete', { done: 'device deleted', refresh: true }, (api, _f, req) => api.delete('/api/devices/:id', { params: { id: idOf(req) } }));
  action(app, '/devices/:id/sync-key', { done: 'sync key made', show: (a) => <SyncKey k={a.body as Parameters<typeof SyncKey>[0]['k']} /> }, (api, _f, req) =>
    api.post('/api/devices/:id/sync-key', { params: { id: idOf(req) } }),
  );
  action(app, '/devices/:id/shelves', { done: 'shelf added', refresh: true }, (api, f, req) =>
    api.post('/api/devices/:id/shelves', { params: { id: idOf(req) }, body: { collection_id: field(f, 'collection_id') ?? '' } }),
  );
  action(app, '/devices/:id/shelves/:collection/delete', { done: 'shelf removed', refresh: true }, (api, _f, req) =>
    api.delete('/api/devices/:id/shelves/:collection_id', { params: { id: idOf(req), collection_id: idOf(req, 'collection') } }),
  );
  action(app, '/devices/:id/queue/clear', { done: 'sync queue cleared', refresh: true }, (api, _f, req) => api.delete('/api/devices/:id/queue', { params: { id: idOf(req) } }));
  action(app, '/devices/queue/:id/retry', { done: 'retried', refresh: true }, (api, _f, req) => api.post('/api/sync-queue/:id/retry', { params: { id: idOf(req) } }));
  action(app, '/devices/queue/:id/delete', { done: 'sync queue entry deleted', refresh: true }, (api, _f, req) => api.delete('/api/sync-queue/:id', { params: { id: idOf(req) } }));
  // a Kobo is made by its owner (it cannot run the registration flow); its address is shown once
  type KoboAnswer = Parameters<typeof KoboAddress>[0]['k'];
  action(app, '/devices/kobo', { done: 'device created', show: (a) => <KoboAddress k={a.body as KoboAnswer} /> }, (api, f) =>
    api.post('/api/devices/kobo', { body: { name: field(f, 'name') ?? '', books: field(f, 'books') ?? 'all' } }),
  );
  action(app, '/devices/:id/kobo', { done: 'kobo settings saved', refresh: true }, (api, f, req) =>
    api.put('/api/devices/:id/kobo', { params: { id: idOf(req) }, body: { books: field(f, 'books') ?? '' } }),
  );
  action(app, '/devices/:id/kobo-address', { done: 'kobo address made', show: (a) => <KoboAddress k={a.body as KoboAnswer} /> }, (api, _f, req) =>
    api.post('/api/devices/:id/kobo-token', { params: { id: idOf(req) } }),
  );
  action(app, '/devices/opds-key', { done: 'reader key made', show: (a) => <ReaderKey k={a.body as { opds_path: string; opds_url?: string }} origin="" /> }, (api) =>
    api.post('/api/auth/opds-key'),
  );
  action(app, '/devices/opds-key/revoke', { done: 'opds key revoked', refresh: true }, (api) => api.delete('/api/auth/opds-key'));
}
