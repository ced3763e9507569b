export { identityService } from './main';
export { migrations as identityMigrations, SCHEMA as IDENTITY_SCHEMA } from './store/migrations';
export { replayLog as replayIdentityLog } from './store/replay';
export type { IdentityDb } from './store/database';
