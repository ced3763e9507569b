// The calls a Kobo makes as it starts: sign-in and refresh (its Kobo token stands for both of the
// store's tokens), the initialization naming the store's resources, its owner's profile, and the
// account calls the device needs answered (loyalty, analytics, wishlist: nothing to tell).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { KoboContext } from './context';
import { koboResources } from './resources';

/** a user key a device may send: printable text the store would have given it */
const USER_KEY = /^[\x21-\x7e]{1,256}$/;

/**
 * The `UserKey` the store's answers carry: the one the device sends (its body's `UserKey`, else its
 * `X-Kobo-UserKey` header), echoed as the peers echo it, so the device keeps the account it knows;
 * a device that sends none gets its owner's id. The same for the same request, every time.
 */
export function userKeyOf(req: FastifyRequest): string {
  const body = req.body as { UserKey?: unknown } | null | undefined;
  const sent = body && typeof body === 'object' && !Array.isArray(body) ? body.UserKey : undefined;
  if (typeof sent === 'string' && USER_KEY.test(sent)) return sent;
  const header = req.headers['x-kobo-userkey'];
  if (typeof header === 'string' && USER_KEY.test(header)) return header;
  return req.kobo!.user_id;
}

export function koboStartUpRoutes(app: FastifyInstance, k: KoboContext): void {
  const { P, hook, base, origin } = k;
  const tokens = (req: FastifyRequest) => {
    const t = (req.params as { token: string }).token;
    return { AccessToken: t, RefreshToken: t, TokenType: 'Bearer', TrackingId: req.kobo!.device_id, UserKey: userKeyOf(req) };
  };
  app.post(`${P}/v1/auth/device`, hook, async (req) => tokens(req));
  app.post(`${P}/v1/auth/refresh`, hook, async (req) => tokens(req));
  app.get(`${P}/v1/initialization`, hook, async (req, reply) =>
    reply.header('x-kobo-apitoken', 'e30=').send({ Resources: koboResources(base(req), origin(req) || base(req).replace(/\/kobo\/.*$/, '')) }),
  );
  app.get(`${P}/v1/user/profile`, hook, async (req) => ({
    UserKey: userKeyOf(req),
    UserDisplayName: req.kobo!.name,
    HasPurchasedBook: true,
    HasPurchasedAudiobook: false,
    IsOneStoreAccount: false,
  }));
  app.get(`${P}/v1/user/loyalty/benefits`, hook, async () => ({ Benefits: {} }));
  app.get(`${P}/v1/analytics/gettests`, hook, async () => ({ Result: 'Success', TestKey: '', Tests: {} }));
  app.post(`${P}/v1/analytics/event`, hook, async () => ({ Result: 'Success' }));
  app.get(`${P}/v1/user/wishlist`, hook, async () => ({ Items: [], TotalCountByProfile: {} }));
}
