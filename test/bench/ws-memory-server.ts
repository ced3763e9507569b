// The live channel alone, for bench:ws's memory per socket: fastify with the gateway's WebSocket
// route and hub (every socket authenticated as one user), no bus and no database. Started with
// --expose-gc; twice a second it collects garbage and prints a JSON line of its memory and sockets.
import Fastify, { type FastifyRequest } from 'fastify';
import { LiveHub, wsRoutes } from '@bindery/gateway';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('start with --expose-gc');
const app = Fastify();
app.decorateRequest('caller', null);
const hub = new LiveHub();
const auth = {
  optionalUser: async (req: FastifyRequest) => {
    (req as unknown as { caller: unknown }).caller = { user_id: '00000000-0000-4000-8000-000000000001', role: 'user' };
  },
} as unknown as Parameters<typeof wsRoutes>[1]['auth'];
wsRoutes(app, { auth, hub });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`ws-memory listening at ${url}`);
setInterval(() => {
  gc();
  const m = process.memoryUsage();
  console.log(JSON.stringify({ sockets: hub.size, heapUsed: m.heapUsed, external: m.external, rss: m.rss }));
}, 500);
process.once('SIGTERM', () => process.exit(0));
