// Admin: the accounts (name, e-mail, role, devices) and who sees which library: each user's access
// is all libraries or a chosen few (PUT /api/auth/users/<id>/libraries). Admins always see all.
import { Outcome } from '../layout';
import type { LibraryRow } from './admin-libraries';

export interface UserRow {
  id: string;
  username: string;
  email: string;
  role: 'admin' | 'user';
  device_count?: number;
}
export interface Grants {
  all_libraries: boolean;
  library_ids: string[];
}

function Access({ user, grants, libraries }: { user: UserRow; grants: Grants; libraries: LibraryRow[] }) {
  return (
    <form id={`access-${user.id}`} hx-put={`/api/auth/users/${user.id}/libraries`} hx-ext="bindery-json" hx-target={`#access-outcome-${user.id}`}>
      <fieldset>
        <legend>Libraries {user.username} sees</legend>
        <label for={`all-${user.id}`}>Access</label>
        <select id={`all-${user.id}`} name="all_libraries:bool">
          <option value="true" selected={grants.all_libraries}>
            Every library
          </option>
          <option value="false" selected={!grants.all_libraries}>
            Only the ones ticked
          </option>
        </select>
        <input type="hidden" name="library_ids[]" value="" />
        <ul class="plain">
          {libraries.map((l) => (
            <li key={l.id}>
              <input type="checkbox" id={`lib-${user.id}-${l.id}`} name="library_ids[]" value={l.id} checked={grants.library_ids.includes(l.id)} class="check" />{' '}
              <label class="check-label" for={`lib-${user.id}-${l.id}`}>
                {l.name}
              </label>
            </li>
          ))}
        </ul>
        <button type="submit" id={`save-access-${user.id}`}>
          Save access
        </button>
        <Outcome id={`access-outcome-${user.id}`} />
      </fieldset>
    </form>
  );
}

export function AdminUsers({ users, grants, libraries }: { users: UserRow[]; grants: Map<string, Grants>; libraries: LibraryRow[] }) {
  return (
    <>
      <h1>Users</h1>
      <ul class="plain" id="users">
        {users.map((u) => (
          <li key={u.id} class="card" data-user={u.id}>
            <h2>{u.username}</h2>
            <p class="muted">
              {u.email} · {u.role === 'admin' ? 'Administrator' : 'Reader'} · {u.device_count ?? 0} devices
            </p>
            {u.role === 'admin' ? (
              <p>Administrators see every library.</p>
            ) : (
              <Access user={u} grants={grants.get(u.id) ?? { all_libraries: false, library_ids: [] }} libraries={libraries} />
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
