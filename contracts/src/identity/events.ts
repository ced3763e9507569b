import Type from 'typebox';
import { MailIdentityEvents } from './mail-events';
import { OidcIdentityEvents } from './oidc-events';

export const Role = Type.Union([Type.Literal('user'), Type.Literal('admin')]);
export type Role = Type.Static<typeof Role>;

const Uuid = Type.String({ format: 'uuid' });

/**
 * The languages the pages are shown in (issue 48), as BCP 47 tags: a profile's `language` is one of
 * them. The web's message catalogs hold exactly these (a test checks both ways).
 */
export const LANGUAGES = ['en', 'de', 'fr', 'es', 'ja', 'zh-Hans'] as const;
export type Language = (typeof LANGUAGES)[number];

export const UserRegistered = Type.Object({
  user_id: Uuid,
  email: Type.String(),
  username: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role: Role,
  theme: Type.String(),
  timezone: Type.String(),
  max_devices: Type.Integer(),
  registered_by: Type.Union([Uuid, Type.Null()]),
  /**
   * Which libraries the new account sees until an admin changes it (admins see every library
   * whatever this says). Absent in events from before identity stated it: then the
   * `new_users_see_all_libraries` setting in force at the event decides (every library unless off).
   */
  all_libraries: Type.Optional(Type.Boolean()),
  library_ids: Type.Optional(Type.Array(Uuid)),
});

/** A user's profile as GET /api/auth/profile shows it (`theme` absent while none is set). */
export const UserProfile = Type.Object({
  id: Type.String(),
  email: Type.String(),
  username: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  role: Role,
  theme: Type.Optional(Type.String()),
  /** present (true) only when the admin allowed this user to edit metadata and covers (issue 43) */
  can_edit_metadata: Type.Optional(Type.Boolean()),
  /** the language the pages are shown in (one of LANGUAGES); absent while the person has not chosen one (issue 48) */
  language: Type.Optional(Type.String()),
  /** present (true) only while the person lets admins see their reading statistics (decision 120) */
  share_statistics: Type.Optional(Type.Boolean()),
});
export type UserProfile = Type.Static<typeof UserProfile>;

export const ProfileChanged = Type.Object({
  user_id: Uuid,
  changes: Type.Object({
    username: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
    first_name: Type.Optional(Type.String()),
    last_name: Type.Optional(Type.String()),
    theme: Type.Optional(Type.String()),
    timezone: Type.Optional(Type.String()),
    /** a language of LANGUAGES, or '' when the person goes back to their browser's (issue 48) */
    language: Type.Optional(Type.String()),
    /** the person lets admins see their reading statistics among the library's (decision 120) */
    share_statistics: Type.Optional(Type.Boolean()),
  }),
  changed_by: Uuid,
  /**
   * The user's profile after the change, so a consumer keeps it without folding `changes` into
   * what it holds. Absent in events from before identity stated it: then fold `changes`.
   */
  profile: Type.Optional(UserProfile),
});

export const RoleChanged = Type.Object({
  user_id: Uuid,
  role: Role,
  previous_role: Role,
  changed_by: Uuid,
  /** 'oidc-group': the user's sign-in through the OpenID provider, by its admin group claim (OIDC_ADMIN_GROUP; changed_by is the user) */
  source: Type.Optional(Type.Literal('oidc-group')),
  /** The user's profile after the change (its `role` is `role`); absent in events from before identity stated it. */
  profile: Type.Optional(UserProfile),
});

export const PasswordChanged = Type.Object({
  user_id: Uuid,
  changed_by: Uuid,
  /** sessions issued before this instant are no longer valid (null in events from before every change set it) */
  sessions_revoked_before: Type.Union([Type.String(), Type.Null()]),
  /** the access token (jti) of the session that made a self change: it keeps working */
  session_kept: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});

/** A user's reader key (OPDS key) was created, replaced or revoked. */
export const ReaderKeyChanged = Type.Object({
  user_id: Uuid,
  action: Type.Union([Type.Literal('created'), Type.Literal('revoked')]),
  /**
   * A created key's SHA-256 (hex; the key is 256 random bits, so the hash cannot be turned back
   * into it) and when it was made (ISO 8601). Absent in events from before they were stated.
   */
  key_hash: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String()),
});

/**
 * A sign-in with this login string failed (a login, HTTP Basic, KOReader sync): the count and
 * window after it; `locked_until` is set when this failure locked the login.
 */
export const LoginFailed = Type.Object({
  login: Type.String(),
  failures: Type.Integer({ minimum: 1 }),
  first_failed_at: Type.String(),
  locked_until: Type.Union([Type.String(), Type.Null()]),
});

/** The failures of a login string no longer count: a good sign-in, or nothing within a day. */
export const LoginFailuresCleared = Type.Object({ login: Type.String() });

export const UserDeleted = Type.Object({
  user_id: Uuid,
  role: Role,
  deleted_by: Uuid,
  /** the first other admin, who takes over what a deleted admin owned; null for a plain user */
  successor_admin_id: Type.Union([Uuid, Type.Null()]),
});

export const MaxDevicesChanged = Type.Object({ user_id: Uuid, max_devices: Type.Integer({ minimum: 1, maximum: 100 }) });

export const SettingsChanged = Type.Object({
  changes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])),
  changed_by: Uuid,
});

export const ConfigChanged = Type.Object({
  changes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])),
  changed_by: Uuid,
});

export const SessionRevoked = Type.Object({
  user_id: Uuid,
  /** the access token's jti, when one was presented */
  jti: Type.Union([Type.String(), Type.Null()]),
  /** when the revoked access token expires anyway (ISO 8601) */
  expires_at: Type.Union([Type.String(), Type.Null()]),
});

/** A sign-in (register or login) began a session: a refresh family and its first access token. */
export const SessionStarted = Type.Object({
  user_id: Uuid,
  /** the session: its refresh family, kept across refreshes */
  session_id: Uuid,
  /** the access token's jti */
  jti: Type.String(),
  /** what signed in, as its User-Agent header said ('' when it said nothing; at most 300 characters) */
  client: Type.String(),
  /** when the access token expires (ISO 8601) */
  expires_at: Type.String(),
});

/** A refresh gave a session a new access token. */
export const SessionRenewed = Type.Object({ user_id: Uuid, session_id: Uuid, jti: Type.String(), expires_at: Type.String() });

/** Which libraries a user may see; admins see every library whatever this says. */
export const LibraryAccessChanged = Type.Object({
  user_id: Uuid,
  all_libraries: Type.Boolean(),
  library_ids: Type.Array(Uuid),
  changed_by: Uuid,
});

/** What an admin allowed a user beyond their role (issue 43): editing metadata and covers. */
export const PermissionsChanged = Type.Object({
  user_id: Uuid,
  can_edit_metadata: Type.Boolean(),
  changed_by: Uuid,
  /** The user's profile after the change, as role-changed states it. */
  profile: Type.Optional(UserProfile),
});

export const IdentityEvents = {
  'identity.user-registered.v1': UserRegistered,
  'identity.profile-changed.v1': ProfileChanged,
  'identity.role-changed.v1': RoleChanged,
  'identity.password-changed.v1': PasswordChanged,
  'identity.user-deleted.v1': UserDeleted,
  'identity.max-devices-changed.v1': MaxDevicesChanged,
  'identity.settings-changed.v1': SettingsChanged,
  'identity.config-changed.v1': ConfigChanged,
  'identity.session-revoked.v1': SessionRevoked,
  'identity.session-started.v1': SessionStarted,
  'identity.session-renewed.v1': SessionRenewed,
  'identity.library-access-changed.v1': LibraryAccessChanged,
  'identity.permissions-changed.v1': PermissionsChanged,
  'identity.reader-key-changed.v1': ReaderKeyChanged,
  'identity.login-failed.v1': LoginFailed,
  'identity.login-failures-cleared.v1': LoginFailuresCleared,
  ...MailIdentityEvents,
  ...OidcIdentityEvents,
} as const;

export type IdentityEventType = keyof typeof IdentityEvents;
export type IdentityEvent = {
  [K in IdentityEventType]: { type: K; data: Type.Static<(typeof IdentityEvents)[K]> };
}[IdentityEventType];
