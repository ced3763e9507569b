// Admin: the people page (each account with its library access) and its writes, each the API's own
// route called as the signed-in admin.
import type { FastifyInstance } from 'fastify';
import { action, field, fields } from './actions';
import type { Web } from './context';
import { i18nFor } from './i18n/request';
import { Failed } from './layout';
import { type Access, AdminUsers } from './pages/admin-users';

const user = (req: { params: unknown }) => (req.params as { id: string }).id;

export function adminUserRoutes({ app, page, render }: Web): void {
  page('/admin/users', { admin: true }, async ({ req, reply, api, viewer }) => {
    const { t } = i18nFor(req);
    const [users, libs] = await Promise.all([api.get('/api/auth/users'), api.get('/api/libraries')]);
    if (users.status !== 200 || libs.status !== 200) return render(reply, t('users.title'), viewer, '/admin/users', <Failed status={users.status} />, 502);
    const access = new Map<string, Access>();
    await Promise.all(
      users.body.map(async (u) => {
        const a = await api.get('/api/auth/users/:user_id/libraries', { params: { user_id: u.id } });
        if (a.status === 200) access.set(u.id, a.body);
      }),
    );
    const added = (req.query as Record<string, unknown>).added;
    return render(
      reply,
      t('users.title'),
      viewer,
      '/admin/users',
      <AdminUsers users={users.body} access={access} libraries={libs.body} me={viewer.id} {...(typeof added === 'string' && added !== '' ? { added } : {})} />,
    );
  });
  adminUserActions(app);
}

function adminUserActions(app: FastifyInstance): void {
  // registering someone else: the API's answer carries the new person's session, which stays here
  action(app, '/admin/users', { done: 'account created', goTo: (f) => `/admin/users?added=${encodeURIComponent(field(f, 'username') ?? '')}` }, (api, f) =>
    api.post('/api/auth/register', {
      body: {
        email: field(f, 'email') ?? '',
        username: field(f, 'username') ?? '',
        password: field(f, 'password') ?? '',
        role: field(f, 'role') ?? 'user',
      },
    }),
  );
  action(app, '/admin/users/:id/role', { done: 'role updated', refresh: true }, (api, f, req) =>
    api.put('/api/auth/profile/:user_id', { params: { user_id: user(req) }, body: { role: field(f, 'role') ?? '' } }),
  );
  action(app, '/admin/users/:id/max-devices', { done: 'max devices updated' }, (api, f, req) => {
    const v = field(f, 'max_devices') ?? '';
    return api.put('/api/auth/users/:user_id/max-devices', { params: { user_id: user(req) }, body: { max_devices: (/^\d{1,9}$/.test(v.trim()) ? Number(v) : v) as number } });
  });
  // the select's "true"/"false" as the JSON boolean the API takes; anything else is sent as typed (the API's message)
  action(app, '/admin/users/:id/permissions', { done: 'permissions updated' }, (api, f, req) => {
    const v = field(f, 'can_edit_metadata') ?? '';
    return api.put('/api/auth/users/:user_id/permissions', { params: { user_id: user(req) }, body: { can_edit_metadata: v === 'true' ? true : v === 'false' ? false : v } });
  });
  action(app, '/admin/users/:id/libraries', { done: 'library access updated' }, (api, f, req) =>
    api.put('/api/auth/users/:user_id/libraries', {
      params: { user_id: user(req) },
      body: { all_libraries: field(f, 'all_libraries') !== 'false', library_ids: fields(f, 'library_ids') },
    }),
  );
  action(app, '/admin/users/:id/password', { done: 'password updated successfully' }, (api, f, req) =>
    api.put('/api/auth/password/:user_id', {
      params: { user_id: user(req) },
      body: { new_password: field(f, 'new_password') ?? '', confirm_password: field(f, 'confirm_password') ?? '' },
    }),
  );
  action(app, '/admin/users/:id/delete', { done: 'user account deleted successfully', refresh: true }, (api, _f, req) =>
    api.delete('/api/auth/profile/:user_id', { params: { user_id: user(req) } }),
  );
}
