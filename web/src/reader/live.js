// A position that arrives from another device while the book is open (the live channel's
// `progress` topic on /api/ws): the reader offers to go there. The reader's own saves are not
// offered back (`mine` tells them apart); a dropped socket is opened again after a pause.

/**
 * @param {{item: string, mine: (p: any) => boolean, offer: (p: any) => void}} o
 */
export function follow({ item, mine, offer }) {
  if (!('WebSocket' in window)) return;
  let wait = 1000;
  const connect = () => {
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/ws`);
    ws.addEventListener('message', (m) => {
      let msg;
      try {
        msg = JSON.parse(m.data);
      } catch {
        return;
      }
      if (msg.type === 'ready') {
        wait = 1000;
        ws.send(JSON.stringify({ type: 'subscribe', topics: ['progress'] }));
      } else if (msg.type === 'subscribed') document.getElementById('reader').dataset.live = 'open';
      else if (msg.type === 'event' && msg.event === 'progress-saved' && msg.data?.media_item_id === item && msg.data.progress && !mine(msg.data.progress))
        offer(msg.data.progress);
    });
    ws.addEventListener('close', () => {
      document.getElementById('reader').dataset.live = 'closed';
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    });
  };
  connect();
}
