// The device-sync service's user-facing texts (the spec shows none for these areas: docs/decisions.md, "Devices").
export const DeviceSyncMessages = {
  deviceNotFound: 'device not found',
  invalidDeviceId: 'invalid device id',
  registrationNotFound: 'device registration not found',
  registrationUnknown: 'device registration not found or expired',
  registrationExpired: 'device registration expired',
  registrationUsed: 'device registration already completed',
  registrationRejected: 'device registration was rejected',
  registrationClosed: 'device registration is no longer pending',
  deviceCodeRequired: 'device_code is required',
  nameRequired: 'name is required',
  nameTooLong: 'name must be text of at most 100 characters',
  clientTooLong: 'client must be text of at most 50 characters',
  modelTooLong: 'model must be text of at most 100 characters',
  collectionIdRequired: 'collection_id is required',
  invalidCollectionId: 'invalid collection id',
  collectionNotFound: 'collection not found',
  shelfNotFound: 'shelf not found',
  queueEntryNotFound: 'sync queue entry not found',
  invalidQueueEntryId: 'invalid sync queue entry id',
  queueEntryNotFailed: 'only a failed sync queue entry can be retried',
  idsRequired: 'ids must be a non-empty list of ids',
  invalidStatus: "status must be 'pending' or 'failed'",
  deviceCredentialRequired: 'device credential required',
  invalidDeviceCredential: 'invalid or revoked device credential',
  syncKeyFlag: 'sync_key must be true or false',
  koboBooks: "books must be 'all' or 'shelves'",
  notAKobo: 'device is not a Kobo',
} as const;

/** Approval over the user's limit (identity's `max_devices`). */
export const deviceLimitMessage = (max: number) => `device limit reached (max_devices: ${max})`;
