// The `scanner` topic's source: the catalog's scan events, heard by every gateway replica itself
// (bus.follow), so a scan is seen on every socket whichever replica holds it.
// Wiring note: scan progress is moving to a transient subject (`transient.catalog.scan-progress`,
// Bus.notify/listen); when that lands, `listenScans` should listen there instead of following the
// log. Until then the log is followed and what happened before this process started is skipped.
import type { Bus, Logger, Subscription } from '@bindery/platform';
import type { LiveHub } from './hub';

export const SCAN_EVENTS = ['catalog.scan-started.v1', 'catalog.scan-progress.v1', 'catalog.scan-finished.v1'] as const;
const NAMES: Record<string, string> = {
  'catalog.scan-started.v1': 'scan-started',
  'catalog.scan-progress.v1': 'scan-progress',
  'catalog.scan-finished.v1': 'scan-finished',
};

export async function listenScans(bus: Bus, hub: LiveHub, log: Logger, since = Date.now()): Promise<Subscription> {
  return bus.follow({
    source: 'catalog',
    types: SCAN_EVENTS,
    handler: async (ev) => {
      if (Date.parse(ev.recordedAt) < since) return;
      try {
        hub.publish('scanner', { type: 'event', topic: 'scanner', event: NAMES[ev.type], data: ev.data });
      } catch (e) {
        log.warn({ err: e }, 'live channel: scanner event not delivered');
      }
    },
  });
}
