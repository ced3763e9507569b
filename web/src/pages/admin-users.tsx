// Admin: the people of this server (role, devices, library access), a form to add one (public
// registration is off by default: this is how people get accounts), and per person: role, maximum
// devices, whether they may edit books' details and covers, which libraries they see, a new password, delete. Every change is the API's own route,
// posted through the web app's proxy (routes in admin-users-routes.tsx) so the answer is a fragment
// worded as the API words it.
import { Outcome } from '../layout';

export interface UserRow {
  id: string;
  email: string;
  username: string;
  role: 'user' | 'admin';
  max_devices: number;
  device_count: number;
  /** the admin allowed this person to edit books' details and covers (issue 43) */
  can_edit_metadata?: boolean;
  created_at: string;
}
export interface Access {
  all_libraries: boolean;
  library_ids: string[];
}
export interface LibraryName {
  id: string;
  name: string;
}

export function AdminUsers(p: { users: UserRow[]; access: Map<string, Access>; libraries: LibraryName[]; me: string; added?: string }) {
  return (
    <>
      <h1>People</h1>
      {p.added && (
        <div class="alert alert-success" role="status" id="added">
          {`Account created for ${p.added}.`}
        </div>
      )}
      <section class="card" aria-labelledby="add-title">
        <h2 id="add-title">Add a person</h2>
        <p class="muted">Anyone you add can sign in at once with the password you choose here, and change it on their profile.</p>
        <form id="add-user" hx-post="/admin/users" hx-target="#add-outcome">
          <label for="new-email">E-mail</label>
          <input id="new-email" name="email" type="email" autocomplete="off" required />
          <label for="new-username">Username</label>
          <input id="new-username" name="username" autocomplete="off" required minlength={3} maxlength={50} />
          <label for="new-password">Password</label>
          <input id="new-password" name="password" type="password" autocomplete="new-password" required />
          <label for="new-role">Role</label>
          <select id="new-role" name="role">
            <option value="user">Reader</option>
            <option value="admin">Administrator</option>
          </select>
          <button type="submit" class="primary" id="add-user-submit">
            Add
          </button>
          <Outcome id="add-outcome" />
        </form>
      </section>
      <section aria-labelledby="people-title">
        <h2 id="people-title">Everyone</h2>
        <ul class="plain people" id="people">
          {p.users.map((u) => (
            <UserCard key={u.id} u={u} access={p.access.get(u.id) ?? { all_libraries: true, library_ids: [] }} libraries={p.libraries} me={p.me} />
          ))}
        </ul>
      </section>
    </>
  );
}

function UserCard({ u, access, libraries, me }: { u: UserRow; access: Access; libraries: LibraryName[]; me: string }) {
  const base = `/admin/users/${u.id}`;
  const id = (s: string) => `${s}-${u.id}`;
  return (
    <li class="card person" data-user={u.id} data-name={u.username}>
      <h3 class="person-name">{u.username}</h3>
      <dl class="meta">
        <dt>E-mail</dt>
        <dd>{u.email}</dd>
        <dt>Role</dt>
        <dd class="person-role">{u.role === 'admin' ? 'Administrator' : 'Reader'}</dd>
        <dt>Devices</dt>
        <dd>{`${u.device_count} of ${u.max_devices}`}</dd>
        <dt>Editing</dt>
        <dd class="person-editing">{u.role === 'admin' ? 'Yes (administrator)' : u.can_edit_metadata ? "May edit books' details and covers" : 'No'}</dd>
        <dt>Libraries</dt>
        <dd class="person-access">
          {u.role === 'admin'
            ? 'All (administrator)'
            : access.all_libraries
              ? 'All'
              : libraries
                  .filter((l) => access.library_ids.includes(l.id))
                  .map((l) => l.name)
                  .join(', ') || 'None'}
        </dd>
      </dl>
      <details>
        <summary>{`Change ${u.username}`}</summary>
        <form hx-post={`${base}/role`} hx-target={`#${id('role-outcome')}`}>
          <label for={id('role')}>Role</label>
          <select id={id('role')} name="role">
            <option value="user" selected={u.role === 'user'}>
              Reader
            </option>
            <option value="admin" selected={u.role === 'admin'}>
              Administrator
            </option>
          </select>
          <button type="submit">Save role</button>
          <Outcome id={id('role-outcome')} />
        </form>
        <form hx-post={`${base}/max-devices`} hx-target={`#${id('devices-outcome')}`}>
          <label for={id('max')}>Maximum devices</label>
          <input id={id('max')} name="max_devices" type="number" min={1} max={100} value={String(u.max_devices)} required />
          <button type="submit">Save maximum</button>
          <Outcome id={id('devices-outcome')} />
        </form>
        {u.role !== 'admin' && (
          <form id={id('editing')} hx-post={`${base}/permissions`} hx-target={`#${id('editing-outcome')}`}>
            <label for={id('can-edit')}>Editing books' details and covers</label>
            <select id={id('can-edit')} name="can_edit_metadata">
              <option value="false" selected={!u.can_edit_metadata}>
                Not allowed
              </option>
              <option value="true" selected={u.can_edit_metadata === true}>
                Allowed
              </option>
            </select>
            <button type="submit" id={id('save-editing')}>
              Save editing
            </button>
            <Outcome id={id('editing-outcome')} />
          </form>
        )}
        {u.role !== 'admin' && (
          <form id={`access-${u.id}`} hx-post={`${base}/libraries`} hx-target={`#access-outcome-${u.id}`}>
            <fieldset>
              <legend>{`Libraries ${u.username} sees`}</legend>
              <label for={`all-${u.id}`}>Access</label>
              <select id={`all-${u.id}`} name="all_libraries">
                <option value="true" selected={access.all_libraries}>
                  Every library
                </option>
                <option value="false" selected={!access.all_libraries}>
                  Only the ones ticked
                </option>
              </select>
              {libraries.map((l) => (
                <label class="inline" key={l.id} for={`lib-${u.id}-${l.id}`}>
                  <input type="checkbox" id={`lib-${u.id}-${l.id}`} name="library_ids" value={l.id} checked={access.library_ids.includes(l.id)} /> {l.name}
                </label>
              ))}
            </fieldset>
            <button type="submit" id={`save-access-${u.id}`}>
              Save access
            </button>
            <Outcome id={`access-outcome-${u.id}`} />
          </form>
        )}
        <form hx-post={`${base}/password`} hx-target={`#${id('password-outcome')}`} data-reset-on-success>
          <input type="text" name="username" value={u.username} autocomplete="username" hidden />
          <label for={id('pw')}>New password</label>
          <input id={id('pw')} name="new_password" type="password" autocomplete="new-password" required />
          <label for={id('pw2')}>New password again</label>
          <input id={id('pw2')} name="confirm_password" type="password" autocomplete="new-password" required />
          <button type="submit">Set password</button>
          <Outcome id={id('password-outcome')} />
        </form>
        {u.id !== me && (
          <form hx-post={`${base}/delete`} hx-target={`#${id('delete-outcome')}`}>
            <label class="inline">
              <input type="checkbox" name="confirm" value="yes" required /> {`Delete ${u.username} and what they keep here (progress, notes, collections); the books' files stay`}
            </label>
            <button type="submit" class="danger">
              {`Delete ${u.username}`}
            </button>
            <Outcome id={id('delete-outcome')} />
          </form>
        )}
      </details>
    </li>
  );
}
