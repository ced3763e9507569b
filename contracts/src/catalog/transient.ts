// Signals that are not part of the catalog's history: published on plain subjects (NATS core,
// no JetStream; in-process in embedded mode), seen by whoever listens at the moment, never stored.
import Type from 'typebox';
import { ScanCounts } from './events';

/** the running scan's counts so far, about once a second, and once more with the final counts */
export const ScanProgressSubject = 'bindery.transient.catalog.scan-progress';
export const ScanProgress = Type.Object({ scan_id: Type.String({ format: 'uuid' }), library_id: Type.String({ format: 'uuid' }), ...ScanCounts });
export type ScanProgress = Type.Static<typeof ScanProgress>;
