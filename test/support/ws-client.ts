// A WebSocket client for tests and benchmarks: `ws`, which comes with @fastify/websocket (Node 20
// has no WebSocket client of its own).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ROOT } from './bindery';

export interface WsClient {
  on(ev: string, fn: (...a: any[]) => void): void;
  send(s: string, cb?: (err?: Error) => void): void;
  close(): void;
  terminate(): void;
  pause(): void;
  resume(): void;
  readyState: number;
}

export const WsClient = createRequire(join(ROOT, 'services/gateway/node_modules/@fastify/websocket/package.json'))('ws') as new (
  url: string,
  o?: { headers?: Record<string, string>; autoPong?: boolean },
) => WsClient;

/** The live channel's address of a Bindery at `httpUrl`. */
export const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/api/ws`;
