// Signals between reading's replicas that are not part of its history: plain subjects (NATS core,
// no JetStream), seen by whoever listens at the moment, never stored.

/**
 * A replica applied catalog events that change reading's copy of the items: every replica drops
 * the item facts it keeps (page counts, EPUB hashes). No body.
 */
export const ItemsChangedSubject = 'bindery.transient.reading.items-changed';
