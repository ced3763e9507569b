export { readingService } from './main';
// the fold of its log into its tables, for the replay test and a rebuild
export { REPLAYED_TABLES, replayReading } from './store/projection';
export { migrations as readingMigrations, SCHEMA as READING_SCHEMA } from './store/migrations';
export type { ReadingDb } from './store/db';
