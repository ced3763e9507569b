import { err, fail, Messages, ok, type Result } from '@bindery/contracts';
import type { Ev, UserState } from './user';

/** DeleteUser: the last admin stays; a deleted admin's holdings go to the first other admin. */
export function decideDelete(user: UserState, deletedBy: string, otherAdmins: string[]): Result<Ev> {
  if (!user.exists || user.deleted) return err(fail('user_not_found', Messages.userNotFound));
  if (user.role === 'admin' && otherAdmins.length === 0) return err(fail('last_admin', Messages.lastAdminDelete));
  return ok({
    type: 'identity.user-deleted.v1',
    data: { user_id: user.id, role: user.role, deleted_by: deletedBy, successor_admin_id: user.role === 'admin' ? otherAdmins[0]! : null },
  });
}
