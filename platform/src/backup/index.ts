// Backups: a consistent snapshot of every service's log and state in one archive, and its restore.
export * from './archive';
export * from './snapshot';
export * from './restore';
export * from './streams';
