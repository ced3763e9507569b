// The live channel's client, one for every page that listens: a WebSocket on /api/ws (the session
// cookie signs it in) that subscribes to its topics once the server says it is ready, hands on the
// events, and is opened again after a pause when it drops (1 s, doubling up to 30 s; back to 1 s
// once the server is ready again). The live pages (app.ts) and the reader (reader/live.ts) use it.

/** A position as the `progress` topic carries it (progress-saved): the fields the reader reads. */
export interface LivePosition {
  version?: number;
  client?: string;
  device?: string;
  percentage?: number;
  page?: number;
  page_count?: number;
  epubcfi?: string;
}

/** An event of a subscribed topic. */
export interface LiveEvent {
  type: 'event';
  topic?: string;
  event?: string;
  data?: { media_item_id?: string; progress?: LivePosition } | null;
}

type LiveMessage = LiveEvent | { type: 'ready' | 'subscribed' | 'error' };

export interface LiveOptions {
  topics: string[];
  /** the socket is subscribed (`open`) or has dropped (`closed`, opened again after a pause) */
  onState: (state: 'open' | 'closed') => void;
  onEvent: (event: LiveEvent) => void;
}

/** Listens on the live channel, for good (a browser without WebSocket: nothing). */
export function listenLive({ topics, onState, onEvent }: LiveOptions): void {
  if (!('WebSocket' in window)) return;
  let wait = 1000;
  const connect = () => {
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
    ws.addEventListener('message', (m: MessageEvent<string>) => {
      let msg: LiveMessage | null;
      try {
        msg = JSON.parse(m.data);
      } catch {
        return;
      }
      if (!msg) return;
      if (msg.type === 'ready') {
        wait = 1000;
        ws.send(JSON.stringify({ type: 'subscribe', topics }));
      } else if (msg.type === 'subscribed') onState('open');
      else if (msg.type === 'event') onEvent(msg);
    });
    ws.addEventListener('close', () => {
      onState('closed');
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    });
  };
  connect();
}
