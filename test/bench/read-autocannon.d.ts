// What the read benchmark uses of autocannon 8 beyond autocannon.d.ts: request lists.
declare module 'autocannon' {
  interface Options {
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
  }
}
