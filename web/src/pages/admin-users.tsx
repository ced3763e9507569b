// Admin: the people of this server (role, devices, library access), a form to add one (public
// registration is off by default: this is how people get accounts), and per person: role, maximum
// devices, whether they may edit books' details and covers, which libraries they see, a new password, delete. Every change is the API's own route,
// posted through the web app's proxy (routes in admin-users-routes.tsx) so the answer is a fragment
// worded as the API words it.
import { useI18n } from '../i18n';
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
  const { t } = useI18n();
  return (
    <>
      <h1>{t('users.heading')}</h1>
      {p.added && (
        <div class="alert alert-success" role="status" id="added">
          {t('users.added', { name: p.added })}
        </div>
      )}
      <section class="card" aria-labelledby="add-title">
        <h2 id="add-title">{t('users.add.heading')}</h2>
        <p class="muted">{t('users.add.intro')}</p>
        <form id="add-user" hx-post="/admin/users" hx-target="#add-outcome">
          <label for="new-email">{t('users.email')}</label>
          <input id="new-email" name="email" type="email" autocomplete="off" required />
          <label for="new-username">{t('users.username')}</label>
          <input id="new-username" name="username" autocomplete="off" required minlength={3} maxlength={50} />
          <label for="new-password">{t('users.password')}</label>
          <input id="new-password" name="password" type="password" autocomplete="new-password" required />
          <label for="new-role">{t('users.role')}</label>
          <select id="new-role" name="role">
            <option value="user">{t('users.role.user')}</option>
            <option value="admin">{t('users.role.admin')}</option>
          </select>
          <button type="submit" class="primary" id="add-user-submit">
            {t('users.add.submit')}
          </button>
          <Outcome id="add-outcome" />
        </form>
      </section>
      <section aria-labelledby="people-title">
        <h2 id="people-title">{t('users.everyone')}</h2>
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
  const { t, number } = useI18n();
  const base = `/admin/users/${u.id}`;
  const id = (s: string) => `${s}-${u.id}`;
  return (
    <li class="card person" data-user={u.id} data-name={u.username}>
      <h3 class="person-name">{u.username}</h3>
      <dl class="meta">
        <dt>{t('users.email')}</dt>
        <dd>{u.email}</dd>
        <dt>{t('users.role')}</dt>
        <dd class="person-role">{u.role === 'admin' ? t('users.role.admin') : t('users.role.user')}</dd>
        <dt>{t('users.devices')}</dt>
        <dd>{t('users.devicesOf', { count: number(u.device_count), max: number(u.max_devices) })}</dd>
        <dt>{t('users.editing')}</dt>
        <dd class="person-editing">{u.role === 'admin' ? t('users.editing.admin') : u.can_edit_metadata ? t('users.editing.yes') : t('users.editing.no')}</dd>
        <dt>{t('users.libraries')}</dt>
        <dd class="person-access">
          {u.role === 'admin'
            ? t('users.libraries.admin')
            : access.all_libraries
              ? t('users.libraries.all')
              : libraries
                  .filter((l) => access.library_ids.includes(l.id))
                  .map((l) => l.name)
                  .join(', ') || t('users.libraries.none')}
        </dd>
      </dl>
      <details>
        <summary>{t('users.change', { name: u.username })}</summary>
        <form hx-post={`${base}/role`} hx-target={`#${id('role-outcome')}`}>
          <label for={id('role')}>{t('users.role')}</label>
          <select id={id('role')} name="role">
            <option value="user" selected={u.role === 'user'}>
              {t('users.role.user')}
            </option>
            <option value="admin" selected={u.role === 'admin'}>
              {t('users.role.admin')}
            </option>
          </select>
          <button type="submit">{t('users.saveRole')}</button>
          <Outcome id={id('role-outcome')} />
        </form>
        <form hx-post={`${base}/max-devices`} hx-target={`#${id('devices-outcome')}`}>
          <label for={id('max')}>{t('users.maxDevices')}</label>
          <input id={id('max')} name="max_devices" type="number" min={1} max={100} value={String(u.max_devices)} required />
          <button type="submit">{t('users.saveMax')}</button>
          <Outcome id={id('devices-outcome')} />
        </form>
        {u.role !== 'admin' && (
          <form id={id('editing')} hx-post={`${base}/permissions`} hx-target={`#${id('editing-outcome')}`}>
            <label for={id('can-edit')}>{t('users.canEdit')}</label>
            <select id={id('can-edit')} name="can_edit_metadata">
              <option value="false" selected={!u.can_edit_metadata}>
                {t('users.canEdit.no')}
              </option>
              <option value="true" selected={u.can_edit_metadata === true}>
                {t('users.canEdit.yes')}
              </option>
            </select>
            <button type="submit" id={id('save-editing')}>
              {t('users.saveEditing')}
            </button>
            <Outcome id={id('editing-outcome')} />
          </form>
        )}
        {u.role !== 'admin' && (
          <form id={`access-${u.id}`} hx-post={`${base}/libraries`} hx-target={`#access-outcome-${u.id}`}>
            <fieldset>
              <legend>{t('users.access.legend', { name: u.username })}</legend>
              <label for={`all-${u.id}`}>{t('users.access')}</label>
              <select id={`all-${u.id}`} name="all_libraries">
                <option value="true" selected={access.all_libraries}>
                  {t('users.access.all')}
                </option>
                <option value="false" selected={!access.all_libraries}>
                  {t('users.access.ticked')}
                </option>
              </select>
              {libraries.map((l) => (
                <label class="inline" key={l.id} for={`lib-${u.id}-${l.id}`}>
                  <input type="checkbox" id={`lib-${u.id}-${l.id}`} name="library_ids" value={l.id} checked={access.library_ids.includes(l.id)} /> {l.name}
                </label>
              ))}
            </fieldset>
            <button type="submit" id={`save-access-${u.id}`}>
              {t('users.saveAccess')}
            </button>
            <Outcome id={`access-outcome-${u.id}`} />
          </form>
        )}
        <form hx-post={`${base}/password`} hx-target={`#${id('password-outcome')}`} data-reset-on-success>
          <input type="text" name="username" value={u.username} autocomplete="username" hidden />
          <label for={id('pw')}>{t('users.newPassword')}</label>
          <input id={id('pw')} name="new_password" type="password" autocomplete="new-password" required />
          <label for={id('pw2')}>{t('users.newPasswordAgain')}</label>
          <input id={id('pw2')} name="confirm_password" type="password" autocomplete="new-password" required />
          <button type="submit">{t('users.setPassword')}</button>
          <Outcome id={id('password-outcome')} />
        </form>
        {u.id !== me && (
          <form hx-post={`${base}/delete`} hx-target={`#${id('delete-outcome')}`}>
            <label class="inline">
              <input type="checkbox" name="confirm" value="yes" required /> {t('users.deleteConfirm', { name: u.username })}
            </label>
            <button type="submit" class="danger">
              {t('users.delete', { name: u.username })}
            </button>
            <Outcome id={id('delete-outcome')} />
          </form>
        )}
      </details>
    </li>
  );
}
