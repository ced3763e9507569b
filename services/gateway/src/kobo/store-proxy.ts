// Kobo store calls Bindery does not answer itself, passed on to Kobo's store while an admin has the
// setting `kobo_store_proxy` on: the path after our token, the query, the body and the device's
// headers, never the hop's, cookies or `Authorization` (the bearer is ours; the Kobo token stays here).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '@bindery/platform';
import { SCHEMA } from '../read-model/migrations';
import { identityTables } from '../read-model/tables';
import type { GatewayDb } from '../read-model/database';

const I = identityTables();
/** headers that belong to this hop or to Bindery, not to the store */
const NOT_PASSED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'cookie', 'authorization', 'accept-encoding', 'keep-alive', 'upgrade']);

export function koboStoreProxy(db: Db<GatewayDb>, storeUrl: string) {
  async function on(): Promise<boolean> {
    const r = await db.withSchema(SCHEMA).selectFrom(I.settings).select('value').where('key', '=', 'kobo_store_proxy').executeTakeFirst();
    return r?.value === true || r?.value === 'true';
  }

  /** The call as the device made it, to the store (our token and the device's bearer for us stay here). */
  async function passOn(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const rest = req.url.replace(/^\/kobo\/[^/?]+/, '') || '/';
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !NOT_PASSED.has(k.toLowerCase()) && !k.startsWith('x-forwarded-')) headers[k] = v;
    try {
      const r = await fetch(`${storeUrl}${rest}`, {
        method: req.method,
        headers,
        ...(req.method === 'GET' || req.method === 'HEAD' || req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
        redirect: 'manual',
        signal: AbortSignal.timeout(10_000),
      });
      const body = Buffer.from(await r.arrayBuffer());
      for (const h of ['content-type', 'x-kobo-apitoken', 'x-kobo-synctoken', 'x-kobo-sync']) {
        const v = r.headers.get(h);
        if (v) reply.header(h, v);
      }
      return reply.code(r.status).send(body);
    } catch (e) {
      req.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'Kobo store unreachable');
      return reply.code(200).send({});
    }
  }

  // the reading-services host (the device strips our path): answered, never a 401 (one aborts the device's whole sync)

  return { on, passOn };
}
