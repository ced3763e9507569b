// The live channel: GET /api/ws upgrades to a WebSocket. Authentication by the session cookie or a
// Bearer header on the upgrade, or by a first message `{"type":"auth","token":"<jwt>"}` within 10 s.
// Client messages: `auth`, `subscribe` `{topics:[...]}`, `unsubscribe`, `ping`. Server messages are
// `{type, ...}` envelopes: `ready`, `subscribed`, `pong`, `event` `{topic, event, data}`, `error`.
// Heartbeat: a WebSocket ping every 30 s; a socket that has not answered the previous one is closed.
// A device credential authenticates through `{"type":"auth","device":"<credential>"}` once
// device-sync supplies the check (`WsDeps.device`). docs/decisions.md, "OPDS and the live channel"
// and "Live channel topics".
import type { FastifyInstance, FastifyRequest } from 'fastify';
import websocket, { type WebSocket } from '@fastify/websocket';
import { Messages, type Identity } from '@bindery/contracts';
import type { Auth } from '../http/authenticate';
import type { Bus, Logger, Metrics, Subscription } from '@bindery/platform';
import { ADMIN_TOPICS, LiveHub, send, TOPICS, watchLive, type Member, type Topic } from '../live/hub';
import { listenScans } from '../live/scan-feed';
import { followUserTopics } from '../live/user-feed';
import { CLOSE_POLICY, followIdentity } from '../live/identity-feed';
import type { Origins } from '../http/origin';
import { Empty, errors } from '../http/schemas';

export const WS_PATH = '/api/ws';
export const HEARTBEAT_MS = 30_000;
export const AUTH_TIMEOUT_MS = 10_000;
/** a client message is small; anything bigger is refused by the server */
const MAX_MESSAGE_BYTES = 16 * 1024;
/** setTimeout's limit; a token living longer is checked again by its revocation events only */
const MAX_TIMER_MS = 2 ** 31 - 1;

type DeviceOwner = { user_id: string; device_id: string };
/**
 * Device credentials (device-sync's; the gateway's `deviceAuthenticator` fits): the owner and
 * device of a credential, or null when it is unknown, revoked or deleted. A device socket acts as
 * its owner with the role `user`, so it never receives `scanner`.
 */
export interface DeviceAuthenticator {
  /** a credential sent in the first message */
  verify(credential: string): Promise<DeviceOwner | null>;
  /** the credential on the upgrade request (`Authorization: Device …`, `X-Device-Token`) */
  device(req: FastifyRequest): Promise<DeviceOwner | null>;
}

export interface WsDeps {
  auth: Auth;
  hub: LiveHub;
  heartbeatMs?: number;
  /** absent until device-sync provides it: a device credential is then refused */
  device?: DeviceAuthenticator;
  /** refuses an upgrade signed in by the cookie alone from another site's page */
  origins?: Origins;
  /** open sockets one user may hold (their devices' included); more are refused */
  maxSocketsPerUser?: number;
}

export const DEFAULT_MAX_SOCKETS_PER_USER = 50;
const TOO_MANY_SOCKETS = 'too many open connections for this user';

type ClientMessage = { type?: unknown; token?: unknown; device?: unknown; topics?: unknown };

/** What the channel's parts share, built once as it is registered: the heartbeat's marks and the devices the upgrades carried. */
interface Channel {
  deps: WsDeps;
  beat: number;
  maxSockets: number;
  /** sockets that answered the last ping */
  alive: WeakMap<WebSocket, boolean>;
  /** the device credential an upgrade request authenticated with */
  devices: WeakMap<FastifyRequest, DeviceOwner>;
}

export function wsRoutes(app: FastifyInstance, deps: WsDeps): void {
  void app.register(async (sub) => {
    await sub.register(websocket, { options: { maxPayload: MAX_MESSAGE_BYTES } });
    // @fastify/websocket hides its routes from the API document; the live channel belongs in it
    sub.addHook('onRoute', (r) => {
      if (r.websocket && r.schema) r.schema.hide = false;
    });
    const ch: Channel = {
      deps,
      beat: deps.heartbeatMs ?? HEARTBEAT_MS,
      maxSockets: deps.maxSocketsPerUser ?? DEFAULT_MAX_SOCKETS_PER_USER,
      alive: new WeakMap(),
      devices: new WeakMap(),
    };
    heartbeat(sub, ch);
    upgradeCheck(sub, ch);
    const schema = {
      tags: ['live'],
      summary: 'the live channel: a WebSocket (send `subscribe` and `ping`; receive progress, conflicts, scanner, devices and queue messages)',
      security: [{ bearer: [] }, { cookie: [] }] as Record<string, string[]>[],
      response: { 101: Empty('switching to the WebSocket protocol'), ...errors(400, 401, 403, 404, 429) },
    };
    sub.get(WS_PATH, { websocket: true, schema }, (socket, req) => openSocket(ch, socket, req));
  });
}

/** Pings every socket each beat; one that has not answered the previous ping is closed. */
function heartbeat(sub: FastifyInstance, { beat, alive }: Channel): void {
  const timer = setInterval(() => {
    for (const s of sub.websocketServer.clients) {
      if (alive.get(s) === false) {
        s.terminate();
        continue;
      }
      alive.set(s, false);
      s.ping();
    }
  }, beat);
  timer.unref();
  sub.addHook('onClose', async () => clearInterval(timer));
}

/** The upgrade carries the cookie, a Bearer header or a device credential; without one, the first message must authenticate. */
function upgradeCheck(sub: FastifyInstance, { deps, maxSockets, devices }: Channel): void {
  sub.addHook('onRequest', async (req, reply) => {
    if (req.url.split('?', 1)[0] !== WS_PATH) return;
    await deps.auth.optionalUser(req);
    // a cookie rides along on another site's script's WebSocket too: it counts only from our own pages
    if (req.caller && !req.headers.authorization && deps.origins?.crossSite(req)) return reply.code(403).send({ error: Messages.crossOriginRefused });
    const dev = !req.caller && deps.device ? await deps.device.device(req) : null;
    if (dev) devices.set(req, dev);
    const owner = req.caller?.user_id ?? dev?.user_id;
    if (owner && deps.hub.count(owner) >= maxSockets) return reply.code(429).send({ error: TOO_MANY_SOCKETS });
  });
}

/** One socket: its member of the hub once authenticated, and how it answers. */
interface Session {
  socket: WebSocket;
  member: Member | null;
  reply(msg: unknown): unknown;
  admit(caller: Identity.Caller, deviceId?: string): unknown;
}

/** A socket just upgraded: admitted at once when the upgrade authenticated, else given 10 s to. */
function openSocket({ deps, beat, maxSockets, alive, devices }: Channel, socket: WebSocket, req: FastifyRequest): void {
  alive.set(socket, true);
  socket.on('pong', () => alive.set(socket, true));
  const session: Session = {
    socket,
    member: null,
    reply: (msg) => (session.member ? send(session.member, JSON.stringify(msg), deps.hub) : socket.send(JSON.stringify(msg))),
    admit: (caller, deviceId) => {
      if (deps.hub.count(caller.user_id) >= maxSockets) {
        socket.send(JSON.stringify({ type: 'error', error: TOO_MANY_SOCKETS }));
        return socket.close(CLOSE_POLICY, TOO_MANY_SOCKETS);
      }
      const member: Member = {
        socket,
        userId: caller.user_id,
        role: caller.role,
        topics: new Set(),
        ...(deviceId ? { deviceId } : {}),
        ...(caller.jti ? { jti: caller.jti } : {}),
      };
      session.member = member;
      deps.hub.add(member);
      // the socket lives no longer than the token that opened it: the client reconnects with a fresh one
      if (caller.exp) {
        const expiry = setTimeout(() => socket.close(CLOSE_POLICY, Messages.invalidToken), Math.min(MAX_TIMER_MS, Math.max(0, caller.exp * 1000 - Date.now())));
        expiry.unref();
        socket.on('close', () => clearTimeout(expiry));
      }
      session.reply({ type: 'ready', user_id: caller.user_id, role: caller.role, ...(deviceId ? { device_id: deviceId } : {}), topics: [...TOPICS], heartbeat_ms: beat });
    },
  };
  socket.on('close', () => {
    if (session.member) deps.hub.remove(session.member);
  });
  const deadline = setTimeout(() => {
    if (!session.member) socket.close(CLOSE_POLICY, Messages.unauthorized);
  }, AUTH_TIMEOUT_MS);
  socket.on('close', () => clearTimeout(deadline));
  const dev = devices.get(req);
  if (req.caller) session.admit(req.caller);
  else if (dev) session.admit({ user_id: dev.user_id, role: 'user' }, dev.device_id);

  socket.on('message', (raw: Buffer, isBinary: boolean) => {
    void answer(deps, session, raw, isBinary);
  });
}

/** A client message: `ping`, `auth`, `subscribe` or `unsubscribe`; anything else is answered with an error. */
async function answer(deps: WsDeps, session: Session, raw: Buffer, isBinary: boolean): Promise<unknown> {
  const { reply } = session;
  let msg: ClientMessage;
  try {
    msg = isBinary ? {} : (JSON.parse(raw.toString()) as ClientMessage);
  } catch {
    return reply({ type: 'error', error: 'invalid message' });
  }
  if (typeof msg !== 'object' || msg === null) return reply({ type: 'error', error: 'invalid message' });
  switch (msg.type) {
    case 'ping':
      return reply({ type: 'pong', at: new Date().toISOString() });
    case 'auth':
      return signIn(deps, session, msg);
    case 'subscribe':
    case 'unsubscribe': {
      if (!session.member) return reply({ type: 'error', error: Messages.unauthorized });
      const topics = Array.isArray(msg.topics) ? msg.topics : null;
      if (!topics || topics.length === 0 || !topics.every((t): t is Topic => TOPICS.includes(t as Topic))) {
        return reply({ type: 'error', error: `topics must be a list of: ${TOPICS.join(', ')}` });
      }
      const m: Member = session.member;
      if (msg.type === 'subscribe' && m.role !== 'admin' && topics.some((t) => ADMIN_TOPICS.has(t))) return reply({ type: 'error', error: Messages.adminRequired });
      for (const t of topics) msg.type === 'subscribe' ? m.topics.add(t) : m.topics.delete(t);
      return reply({ type: 'subscribed', topics: [...m.topics].sort() });
    }
    default:
      return reply({ type: 'error', error: 'unknown message type' });
  }
}

/** `auth` by a device credential or a user JWT; a refused one closes the socket. */
async function signIn(deps: WsDeps, { socket, member, reply, admit }: Session, msg: ClientMessage): Promise<unknown> {
  if (member) return reply({ type: 'error', error: 'already authenticated' });
  if (msg.device !== undefined) {
    const dev = typeof msg.device === 'string' && deps.device ? await deps.device.verify(msg.device) : null;
    if (!dev) {
      reply({ type: 'error', error: Messages.invalidToken });
      return socket.close(CLOSE_POLICY, Messages.invalidToken);
    }
    return admit({ user_id: dev.user_id, role: 'user' }, dev.device_id);
  }
  const caller = typeof msg.token === 'string' ? await callerOf(deps.auth, msg.token) : null;
  if (!caller) {
    reply({ type: 'error', error: Messages.invalidToken });
    return socket.close(CLOSE_POLICY, Messages.invalidToken);
  }
  return admit(caller);
}

/** A user JWT checked exactly like the HTTP routes check it (signature, revocation, current role). */
async function callerOf(auth: Auth, token: string): Promise<Identity.Caller | null> {
  const req = { headers: { authorization: `Bearer ${token}` }, cookies: {}, caller: null } as unknown as FastifyRequest;
  await auth.optionalUser(req);
  return req.caller;
}

/** The channel with its sources: registered from app.ts in one line. */
export function liveChannel(
  app: FastifyInstance,
  deps: { auth: Auth; bus: Bus; log: Logger; device?: DeviceAuthenticator; metrics?: Metrics; origins?: Origins; maxSocketsPerUser?: number | undefined },
): LiveHub {
  const hub = new LiveHub();
  if (deps.metrics) watchLive(deps.metrics.registry, hub);
  wsRoutes(app, {
    auth: deps.auth,
    hub,
    heartbeatMs: Number(process.env.WS_HEARTBEAT_MS) || HEARTBEAT_MS,
    ...(deps.device ? { device: deps.device } : {}),
    ...(deps.origins ? { origins: deps.origins } : {}),
    ...(deps.maxSocketsPerUser ? { maxSocketsPerUser: deps.maxSocketsPerUser } : {}),
  });
  const feeds: Subscription[] = [];
  app.addHook('onReady', async () => {
    feeds.push(await listenScans(deps.bus, hub, deps.log), await followIdentity(deps.bus, hub, deps.log), ...(await followUserTopics(deps.bus, hub, deps.log)));
  });
  app.addHook('onClose', async () => {
    await Promise.all(feeds.splice(0).map((f) => f.stop()));
  });
  return hub;
}
