// The `scanner` topic's source (admins only): a scan's start and end from the catalog's log, followed
// by every gateway replica itself from the moment it starts, and its progress from the catalog's
// transient subject (`bindery.transient.catalog.scan-progress`, about once a second while a scan
// runs, never stored), which every listening replica hears.
import { Catalog } from '@bindery/contracts';
import type { Bus, Logger, Subscription } from '@bindery/platform';
import type { LiveHub } from './hub';

export const SCAN_EVENTS = ['catalog.scan-started.v1', 'catalog.scan-finished.v1'] as const;
const NAMES: Record<string, string> = {
  'catalog.scan-started.v1': 'scan-started',
  'catalog.scan-finished.v1': 'scan-finished',
};

export async function listenScans(bus: Bus, hub: LiveHub, log: Logger): Promise<Subscription> {
  const toAdmins = (event: string, data: unknown) => {
    try {
      hub.publish('scanner', { type: 'event', topic: 'scanner', event, data });
    } catch (e) {
      log.warn({ err: e }, 'live channel: scanner event not delivered');
    }
  };
  const progress = await bus.listen(Catalog.ScanProgressSubject, (data) => toAdmins('scan-progress', data));
  const log_ = await bus.follow({ source: 'catalog', types: SCAN_EVENTS, from: 'now', handler: async (ev) => toAdmins(NAMES[ev.type]!, ev.data) });
  return {
    stop: async () => {
      await Promise.all([progress.stop(), log_.stop()]);
    },
  };
}
