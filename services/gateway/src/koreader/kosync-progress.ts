// The kosync protocol's positions, at one prefix: a push (`PUT syncs/progress`) and a pull
// (`GET syncs/progress/:document`), answered in the reference server's shapes.
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import { params } from '../http/schemas';
import { sendJson } from '../read-model/reads';
import type { KosyncContext } from './kosync-context';
import { DOCUMENT, KosyncBody, KosyncHeaders, keyField, kosyncError, kosyncFailures, Position } from './kosync-protocol';

const Pushed = Type.Object({ document: Type.String(), timestamp: Type.Number(), healed: Type.Optional(Type.Array(Type.String())) });

export function kosyncPushRoute(app: FastifyInstance, { view, pushReading, signed, access, pushes }: KosyncContext, prefix: string): void {
  const pushSchema = {
    tags: ['kosync'],
    summary: 'KOReader sync: push a position',
    headers: KosyncHeaders,
    body: KosyncBody('`{document, percentage, progress, device, device_id}`'),
    response: { 200: Pushed, ...kosyncFailures(401, 403, 429, 502) },
  };
  app.put(`${prefix}/syncs/progress`, { ...signed, schema: pushSchema }, async (req, reply) => {
    const b = req.body;
    if (typeof b !== 'object' || b === null || Array.isArray(b)) return kosyncError(reply, 2003);
    const body = b as Record<string, unknown>;
    if (!keyField(body.document)) return kosyncError(reply, 2004);
    if (!DOCUMENT.test(body.document)) return kosyncError(reply, 2003);
    const percentage =
      typeof body.percentage === 'number' ? body.percentage : typeof body.percentage === 'string' && body.percentage.trim() !== '' ? Number(body.percentage) : Number.NaN;
    if (!Number.isFinite(percentage) || percentage < 0 || percentage > 1) return kosyncError(reply, 2003);
    if (typeof body.progress !== 'string' || body.progress.length > 4096 || typeof body.device !== 'string' || body.device === '' || body.device.length > 100)
      return kosyncError(reply, 2003);
    if (body.device_id !== undefined && body.device_id !== null && (typeof body.device_id !== 'string' || body.device_id.length > 128)) return kosyncError(reply, 2003);
    const document = body.document.toLowerCase();
    const a = await access(req);
    const item = await view.itemOf(a, document);
    const r = await pushReading(req, 'kosync-push', {
      access: a,
      ...(item ? { item_id: item } : {}),
      input: {
        document,
        progress: body.progress,
        percentage,
        device: body.device,
        device_id: (body.device_id as string | null | undefined) ?? '',
        // signed in with a device's sync key: the position names that device
        ...(req.kosyncDevice ? { bindery_device: req.kosyncDevice } : {}),
      },
    });
    // after the answer, before a pull can follow it: a pull from here reads the push back
    pushes.count++;
    if (!r.ok) return r.error.code === 'validation' ? kosyncError(reply, 2003) : kosyncError(reply, 2000);
    const v = r.value;
    // the reference server's answer; what had to change in the position (a page past the last
    // one, say) is added only when something did: KOReader reads the fields it knows
    return { document: body.document, timestamp: v.timestamp, ...(v.healed.length ? { healed: v.healed } : {}) };
  });
}

export function kosyncPullRoute(app: FastifyInstance, { view, reads, reading, signed, pushes }: KosyncContext, prefix: string): void {
  const pullSchema = {
    tags: ['kosync'],
    summary: 'KOReader sync: the last position',
    headers: KosyncHeaders,
    params: params({ document: 'the document id' }),
    response: { 200: Position, ...kosyncFailures(401, 403, 429, 502) },
  };
  app.get(`${prefix}/syncs/progress/:document`, { ...signed, schema: pullSchema }, async (req, reply) => {
    const raw = (req.params as { document: string }).document;
    if (!keyField(raw)) return kosyncError(reply, 2004);
    // an id no push could have stored has no progress
    if (!DOCUMENT.test(raw)) return {};
    const document = raw.toLowerCase();
    const c = await reads.context(req.caller!);
    // the answer is kept until the read models move past a reading or catalog change (a position
    // written anywhere, a book or a library access changed), as the dashboard's is: devices
    // opening a book pull far more often than anyone writes. A push waits for no read model, so
    // each push through this gateway is a new key as well (decisions 84).
    // A pull records what the device was given (decision "Devices follow the position they were
    // given"): a device's sync key names it, so its pulls are not answered from another's entry.
    const by = req.kosyncDevice?.device_id ?? '-';
    const key = `kosync-pull|${c.key}|${c.positions.reading ?? 0}|${pushes.count}|${req.caller!.user_id}|${by}|${raw}`;
    const r = await reads.cached(key, async () => {
      const item = await view.itemOf(c.access, document);
      const r = await reading(req, 'kosync-pull', {
        access: c.access,
        ...(item ? { item_id: item } : {}),
        query: { document },
        ...(req.kosyncDevice ? { input: { bindery_device: req.kosyncDevice } } : {}),
      });
      if (!r.ok) return r;
      const v = r.value;
      // the id as the device sent it
      return { ok: true, value: JSON.stringify('document' in v ? { ...v, document: raw } : v) };
    });
    if (!r.ok) return kosyncError(reply, 2000);
    return sendJson(reply, r.value);
  });
}
