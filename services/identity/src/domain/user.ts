// The user aggregate: state rebuilt from its own stream, and the profile views of it.
import type { Identity } from '@bindery/contracts';

export type Role = Identity.Role;

export interface UserState {
  exists: boolean;
  deleted: boolean;
  id: string;
  email: string;
  username: string;
  first_name: string;
  last_name: string;
  role: Role;
  theme: string;
  timezone: string;
  /** the chosen language of the pages, '' while none is chosen (issue 48) */
  language: string;
  max_devices: number;
  /** the admin allowed this user to edit metadata and covers (issue 43) */
  can_edit_metadata: boolean;
  /** the person lets admins see their reading statistics (decision 120) */
  share_statistics: boolean;
  version: number;
}

export const DEFAULT_THEME = 'tokyo-night';
export const DEFAULT_TIMEZONE = 'UTC';
export const DEFAULT_MAX_DEVICES = 5;

export const streamOf = (userId: string) => `user-${userId}`;

export const initialUser = (id: string): UserState => ({
  exists: false,
  deleted: false,
  id,
  email: '',
  username: '',
  first_name: '',
  last_name: '',
  role: 'user',
  theme: '',
  timezone: DEFAULT_TIMEZONE,
  language: '',
  max_devices: DEFAULT_MAX_DEVICES,
  can_edit_metadata: false,
  share_statistics: false,
  version: -1,
});

/** The fields of a user that events set: what the users table keeps of the state. */
export type UserFields = Pick<
  UserState,
  'email' | 'username' | 'first_name' | 'last_name' | 'role' | 'theme' | 'timezone' | 'language' | 'max_devices' | 'can_edit_metadata' | 'share_statistics'
>;

/** What an event does to its user: the one reading of user events, for the state here and the users table. */
export type UserChange = { kind: 'registered'; fields: UserFields } | { kind: 'changed'; fields: Partial<UserFields> } | { kind: 'deleted' } | null;

export function userChange(e: Identity.IdentityEvent): UserChange {
  switch (e.type) {
    case 'identity.user-registered.v1': {
      const { email, username, first_name, last_name, role, theme, timezone, max_devices } = e.data;
      return {
        kind: 'registered',
        fields: { email, username, first_name, last_name, role, theme, timezone, language: '', max_devices, can_edit_metadata: false, share_statistics: false },
      };
    }
    case 'identity.profile-changed.v1':
      return { kind: 'changed', fields: e.data.changes };
    case 'identity.role-changed.v1':
      return { kind: 'changed', fields: { role: e.data.role } };
    case 'identity.max-devices-changed.v1':
      return { kind: 'changed', fields: { max_devices: e.data.max_devices } };
    case 'identity.permissions-changed.v1':
      return { kind: 'changed', fields: { can_edit_metadata: e.data.can_edit_metadata } };
    case 'identity.user-deleted.v1':
      return { kind: 'deleted' };
    default:
      return null;
  }
}

export function evolve(s: UserState, e: Identity.IdentityEvent): UserState {
  const next = { ...s, version: s.version + 1 };
  const c = userChange(e);
  switch (c?.kind) {
    case 'registered':
      return { ...next, ...c.fields, exists: true };
    case 'changed':
      return { ...next, ...c.fields };
    case 'deleted':
      return { ...next, deleted: true };
    default:
      return next;
  }
}

export const fold = (id: string, events: Identity.IdentityEvent[]): UserState => events.reduce(evolve, initialUser(id));

/** A user's profile as GET /api/auth/profile shows it (no theme while none is set). */
export const profileOf = (s: UserState): Identity.UserProfile => ({
  id: s.id,
  email: s.email,
  username: s.username,
  first_name: s.first_name,
  last_name: s.last_name,
  role: s.role,
  ...(s.theme !== '' ? { theme: s.theme } : {}),
  ...(s.can_edit_metadata ? { can_edit_metadata: true } : {}),
  ...(s.language !== '' ? { language: s.language } : {}),
  ...(s.share_statistics ? { share_statistics: true } : {}),
});

/**
 * The events a decision made about `user`, each profile or role change stating the profile it
 * leaves (folded from `user` through the events before it), so consumers need not fold `changes`.
 */
export function stateProfiles(user: UserState, events: Ev[]): Ev[] {
  let s = user;
  return events.map((e): Ev => {
    s = evolve(s, e);
    if (e.type === 'identity.profile-changed.v1') return { type: e.type, data: { ...e.data, profile: profileOf(s) } };
    if (e.type === 'identity.role-changed.v1') return { type: e.type, data: { ...e.data, profile: profileOf(s) } };
    if (e.type === 'identity.permissions-changed.v1') return { type: e.type, data: { ...e.data, profile: profileOf(s) } };
    return e;
  });
}

export type Ev = Identity.IdentityEvent;
