// Slow requests (issue 18, item 5): a body trickled a byte at a time, or headers never finished, do
// not hold a connection open for ever, on the gateway and on the ops listener; a normal request and
// an open WebSocket are not affected. Small limits here (HTTP_*_TIMEOUT_SECONDS) keep the test short.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableModes, startBindery, type Bindery } from '../support/bindery';
import { freePort } from '../support/ops';
import { WsClient, wsUrl } from '../support/ws-client';
import { api, register, type Call } from './helpers';

const REQUEST_S = 3;
const HEADERS_S = 2;
const IDLE_S = 4;
/** how long after its deadline a refused request may still be open: Node checks deadlines every half second here, plus a loaded machine */
const SLACK_MS = 3000;

interface Outcome {
  /** what the server sent before it closed */
  answer: string;
  /** ms from the first byte sent until the server closed the connection (null: still open at `giveUpMs`) */
  closedAfterMs: number | null;
}

/**
 * Opens a raw connection to `url`, sends `head`, then the pieces of `drip` (a string: one character
 * each) one every `everyMs`, until they are all sent, the server closes the connection or `giveUpMs` pass.
 */
function trickle(url: string, head: string, drip: string | string[], everyMs: number, giveUpMs: number): Promise<Outcome> {
  const pieces = typeof drip === 'string' ? [...drip] : drip;
  const { hostname, port } = new URL(url);
  return new Promise((resolveP) => {
    const s = connect({ host: hostname, port: Number(port) });
    let answer = '';
    let i = 0;
    let t0 = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      s.destroy();
      resolveP({ answer, closedAfterMs: closed ? Date.now() - t0 : null });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    s.on('data', (d) => (answer += d.toString('latin1')));
    s.once('close', () => finish(true));
    s.once('error', () => undefined);
    s.once('connect', () => {
      t0 = Date.now();
      s.write(head);
      timer = setInterval(() => {
        if (!s.writable || i >= pieces.length) return;
        s.write(pieces[i++]!);
      }, everyMs);
    });
  });
}

const expect408 = (o: Outcome, deadlineS: number) => {
  expect(o.closedAfterMs, `still open after ${deadlineS * 1000 + SLACK_MS} ms; got ${JSON.stringify(o.answer)}`).not.toBeNull();
  expect(o.closedAfterMs!).toBeLessThan(deadlineS * 1000 + SLACK_MS);
  expect(o.answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
  expect(o.answer.endsWith('\r\n\r\n{"error":"request timeout"}')).toBe(true);
};

for (const mode of await availableModes()) {
  describe(`slow requests (${mode})`, () => {
    let b: Bindery;
    let call: Call;
    let ops: string;
    let token: string;
    beforeAll(async () => {
      const opsPort = await freePort();
      ops = `http://127.0.0.1:${opsPort}`;
      b = await startBindery(mode, {
        HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_S),
        HTTP_HEADERS_TIMEOUT_SECONDS: String(HEADERS_S),
        HTTP_IDLE_TIMEOUT_SECONDS: String(IDLE_S),
        // embedded: the one process's ops listener; distributed: the gateway's (set for every process
        // here, so only the gateway, started last, gets the port; the others' are off)
        ...(mode === 'embedded' ? { OPS_PORT: String(opsPort), OPS_HOST: '127.0.0.1' } : {}),
      });
      call = api(b);
      token = (await register(call)).token;
    });
    afterAll(async () => {
      await b?.stop();
    });

    it('answers 408 and closes a body trickled a byte a second, and headers trickled a byte every half second; normal requests still work', async () => {
      const head = (length: number) => `POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      const login = JSON.stringify({ login: 'nobody-slow', password: 'wrong-passw0rd' });
      const [slowBody, slowHeaders, inParts] = await Promise.all([
        trickle(b.url, head(100), `{"login":"${'a'.repeat(98)}`, 1000, (REQUEST_S + 10) * 1000),
        trickle(b.url, `GET /api/setup/status HTTP/1.1\r\nHost: x\r\nX-Slow: `, 'a'.repeat(100), 500, (HEADERS_S + 10) * 1000),
        // a body sent in three parts, well inside the limits: answered, then closed once idle
        trickle(b.url, head(Buffer.byteLength(login)), [login.slice(0, 10), login.slice(10, 20), login.slice(20)], 400, (IDLE_S + 10) * 1000),
      ]);
      expect408(slowBody, REQUEST_S);
      expect408(slowHeaders, HEADERS_S);
      expect(inParts.answer.split('\r\n')[0]).toBe('HTTP/1.1 401 Unauthorized');
      expect(inParts.answer).toContain('\r\n\r\n{"error":"invalid credentials"}');
      expect(inParts.closedAfterMs, 'an idle kept-alive connection is closed').not.toBeNull();
      expect(inParts.closedAfterMs!).toBeGreaterThanOrEqual(IDLE_S * 1000);
      const r = await call('GET', '/api/setup/status');
      expect(r.status, r.text).toBe(200);
    }, 60_000);

    it.runIf(mode === 'embedded')(
      'the ops listener too: a trickled request gets 408 and is closed, a normal one answers',
      async () => {
        const slow = await trickle(ops, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: `, 'a'.repeat(100), 500, (HEADERS_S + 10) * 1000);
        expect(slow.closedAfterMs, JSON.stringify(slow.answer)).not.toBeNull();
        expect(slow.closedAfterMs!).toBeLessThan(HEADERS_S * 1000 + SLACK_MS);
        expect(slow.answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
        const r = await fetch(`${ops}/healthz`);
        expect(r.status).toBe(200);
      },
      60_000,
    );

    it('keeps an idle WebSocket open past every timeout', async () => {
      const s = new WsClient(wsUrl(b.url), { headers: { authorization: `Bearer ${token}` } });
      const messages: Record<string, unknown>[] = [];
      let closed = false;
      s.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString())));
      s.on('close', () => (closed = true));
      s.on('error', () => undefined);
      await new Promise<void>((r, j) => {
        s.on('open', () => r());
        s.on('error', j);
      });
      await new Promise((r) => setTimeout(r, (Math.max(REQUEST_S, HEADERS_S, IDLE_S) + 3) * 1000));
      expect(closed).toBe(false);
      expect(s.readyState).toBe(1);
      s.send(JSON.stringify({ type: 'ping' }));
      const start = Date.now();
      while (!messages.some((m) => m.type === 'pong') && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 50));
      expect(messages.map((m) => m.type)).toEqual(['ready', 'pong']);
      s.close();
    }, 60_000);
  });
}
