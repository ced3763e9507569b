// What an admin allows a user beyond their role (issue 43): `{can_edit_metadata: true|false}`.
import { err, ok, type Result } from '@bindery/contracts';
import { validation } from './validate';

export interface Permissions {
  can_edit_metadata: boolean;
}

/** `can_edit_metadata` is required and a JSON boolean (a form's "true"/"false" is turned into one by the page). */
export function parsePermissions(input: Record<string, unknown>): Result<Permissions> {
  const v = input.can_edit_metadata;
  if (v === undefined || v === null) return err(validation('can_edit_metadata is required'));
  if (typeof v !== 'boolean') return err(validation('can_edit_metadata must be true or false'));
  return ok({ can_edit_metadata: v });
}
