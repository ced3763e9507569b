// What the read benchmark uses of autocannon 8 beyond autocannon.d.ts: request lists, and a hook
// that gives each connection its own.
declare module 'autocannon' {
  interface Options {
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
    setupClient?: (client: { setRequests(requests: NonNullable<Options['requests']>): void }) => void;
  }
}
