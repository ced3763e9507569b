// A position that arrives from another device while the book is open (the live channel's
// `progress` topic, through the app's one live-channel client): the reader offers to go there. The
// reader's own saves are not offered back (`mine` tells them apart).
import { type LivePosition, listenLive } from '../browser/live-channel';

export type { LivePosition };

export function follow({ item, mine, offer }: { item: string; mine: (p: LivePosition) => boolean; offer: (p: LivePosition) => void }): void {
  listenLive({
    topics: ['progress'],
    onState: (state) => {
      const root = document.getElementById('reader');
      if (root) root.dataset.live = state;
    },
    onEvent: (msg) => {
      const progress = msg.data?.progress;
      if (msg.event === 'progress-saved' && msg.data?.media_item_id === item && progress && !mine(progress)) offer(progress);
    },
  });
}
