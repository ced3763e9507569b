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
  max_devices: number;
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
  max_devices: DEFAULT_MAX_DEVICES,
  version: -1,
});

export function evolve(s: UserState, e: Identity.IdentityEvent): UserState {
  const next = { ...s, version: s.version + 1 };
  switch (e.type) {
    case 'identity.user-registered.v1': {
      const d = e.data;
      return {
        ...next,
        exists: true,
        email: d.email,
        username: d.username,
        first_name: d.first_name,
        last_name: d.last_name,
        role: d.role,
        theme: d.theme,
        timezone: d.timezone,
        max_devices: d.max_devices,
      };
    }
    case 'identity.profile-changed.v1':
      return { ...next, ...e.data.changes };
    case 'identity.role-changed.v1':
      return { ...next, role: e.data.role };
    case 'identity.max-devices-changed.v1':
      return { ...next, max_devices: e.data.max_devices };
    case 'identity.user-deleted.v1':
      return { ...next, deleted: true };
    default:
      return next;
  }
}

export const fold = (id: string, events: Identity.IdentityEvent[]): UserState => events.reduce(evolve, initialUser(id));

export type Ev = Identity.IdentityEvent;
