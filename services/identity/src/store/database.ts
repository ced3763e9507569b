// Identity's tables as its migrations make them (migrations.ts, reader-keys-migration.ts,
// kosync-migration.ts): the types every identity query is checked against.
import type { ColumnType, Generated } from 'kysely';
import type { Identity } from '@bindery/contracts';

/** timestamptz: read as a Date; written as a Date (or ISO text); optional where it has a default */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type DefaultNow = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export type SettingValue = string | number | boolean;

export interface UsersTable {
  id: string;
  email: string;
  username: string;
  first_name: Generated<string>;
  last_name: Generated<string>;
  role: Identity.Role;
  theme: Generated<string>;
  timezone: Generated<string>;
  max_devices: Generated<number>;
  device_count: Generated<number>;
  /** identity-004 (issue 43) */
  can_edit_metadata: Generated<boolean>;
  language: Generated<string>;
  /** identity-006 (decision 120): the person lets admins see their reading statistics */
  share_statistics: Generated<boolean>;
  /** identity-mail-001 (issue 47): where this person's books are mailed, '' for none */
  ereader_address: Generated<string>;
  created_at: DefaultNow;
  updated_at: DefaultNow;
  /** bigserial: the order accounts were made in ("the first other admin") */
  seq: Generated<number>;
}

export interface CredentialsTable {
  user_id: string;
  password_hash: string;
  changed_at: DefaultNow;
  /** tokens issued before this instant are refused (identity-002) */
  sessions_valid_after: NullableTimestamp;
  /** argon2id of md5(password) for KOReader (identity-kosync-001) */
  kosync_verifier: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface RefreshTokensTable {
  token_hash: string;
  user_id: string;
  family_id: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  created_at: DefaultNow;
  /** identity-003 */
  access_jti: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface LoginAttemptsTable {
  login: string;
  failures: number;
  first_failed_at: NullableTimestamp;
  locked_until: NullableTimestamp;
}

export interface SettingsTable {
  key: string;
  /** jsonb: read back parsed, written as JSON text */
  value: ColumnType<SettingValue, string, string>;
  updated_at: DefaultNow;
}

export interface ConfigTable {
  key: string;
  value: string;
  updated_at: DefaultNow;
}

export interface ReaderKeysTable {
  user_id: string;
  key_hash: string;
  created_at: DefaultNow;
}

/** identity-mail-001 (issue 47): reset links, kept as their SHA-256 */
export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  requested_at: Timestamp;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

/** identity-mail-001 (issue 47) */
export interface InvitationsTable {
  id: string;
  email: string;
  role: Identity.Role;
  all_libraries: boolean;
  /** jsonb: read back parsed, written as JSON text */
  library_ids: ColumnType<string[], string, string>;
  token_hash: string;
  expires_at: Timestamp;
  invited_by: string;
  created_at: Timestamp;
  accepted_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** when it was accepted or revoked */
  ended_at: NullableTimestamp;
}

/** identity-oidc-001 (issue 47): the projection of identity.oidc-linked.v1 */
export interface OidcLinksTable {
  issuer: string;
  subject: string;
  user_id: string;
  linked_at: Timestamp;
}

/** identity-mail-002 (issue 47): the projection of identity.book-send-*.v1 */
export interface BookSendsTable {
  id: string;
  user_id: string;
  item_id: string;
  title: string;
  format: string;
  file_name: string;
  size: number;
  address: string;
  convert_from: string | null;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  detail: string;
  next_attempt_at: NullableTimestamp;
  claimed_until: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IdentityDb {
  book_sends: BookSendsTable;
  oidc_links: OidcLinksTable;
  password_resets: PasswordResetsTable;
  invitations: InvitationsTable;
  users: UsersTable;
  credentials: CredentialsTable;
  refresh_tokens: RefreshTokensTable;
  login_attempts: LoginAttemptsTable;
  settings: SettingsTable;
  config: ConfigTable;
  reader_keys: ReaderKeysTable;
}
