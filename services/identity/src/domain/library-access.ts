// Which libraries a user may see: every library, or the listed ones. Admins see every library.
import { err, ok, type Result } from '@bindery/contracts';
import { isUuid, validation } from './validate';

export interface LibraryAccess {
  all_libraries: boolean;
  library_ids: string[];
}

export const MAX_LIBRARY_GRANTS = 1000;

/** `{all_libraries?: boolean, library_ids?: uuid[]}`; at least one of them. */
export function parseLibraryAccess(input: Record<string, unknown>): Result<LibraryAccess> {
  const all = input.all_libraries;
  const ids = input.library_ids;
  if (all === undefined && ids === undefined) return err(validation('all_libraries or library_ids is required'));
  if (all !== undefined && typeof all !== 'boolean') return err(validation('all_libraries must be true or false'));
  if (ids !== undefined && (!Array.isArray(ids) || ids.some((x) => !isUuid(x)))) return err(validation('library_ids must be a list of library ids'));
  const list = [...new Set(((ids as string[] | undefined) ?? []).map((x) => x.toLowerCase()))];
  if (list.length > MAX_LIBRARY_GRANTS) return err(validation(`library_ids must have at most ${MAX_LIBRARY_GRANTS} entries`));
  return ok({ all_libraries: all === true, library_ids: list });
}
