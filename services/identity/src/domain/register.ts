// RegisterUser: the spec's register rules 2-6, in their order.
import { err, fail, Messages, ok, type Result } from '@bindery/contracts';
import { DEFAULT_MAX_DEVICES, DEFAULT_THEME, DEFAULT_TIMEZONE, type Ev, type Role } from './user';
import { emailProblem, invalidRequest, length, NAME_MAX, passwordProblem, readStrings, usernameProblem, validation } from './validate';

export interface RegisterInput {
  email: string;
  username: string;
  password: string;
  first_name: string;
  last_name: string;
  role: string;
}

/** Rules 1-3: bind, validate, trim. Pure; the password is hashed only after this passes. */
export function parseRegister(raw: Record<string, unknown>): Result<RegisterInput> {
  const f = readStrings(raw, ['email', 'username', 'password', 'first_name', 'last_name', 'role'] as const);
  if (!f) return err(invalidRequest());
  const problem = emailProblem(f.email.trim()) ?? usernameProblem(f.username) ?? passwordProblem('password', f.password);
  if (problem) return err(validation(problem));
  const username = f.username.trim();
  if (username === '') return err(fail('username_blank', Messages.usernameBlank));
  const again = usernameProblem(username);
  if (again) return err(validation(again));
  for (const k of ['first_name', 'last_name'] as const) if (length(f[k].trim()) > NAME_MAX) return err(validation(`${k} must be at most ${NAME_MAX} characters`));
  return ok({ ...f, email: f.email.trim(), username, first_name: f.first_name.trim(), last_name: f.last_name.trim(), role: f.role.trim().toLowerCase() });
}

export interface RegisterFacts {
  adminExists: boolean;
  registrationEnabled: boolean;
  callerIsAdmin: boolean;
  emailTaken: boolean;
  usernameTaken: boolean;
}

/** Rules 4-6. Returns the role the account gets. */
export function decideRegistration(input: RegisterInput, facts: RegisterFacts): Result<Role> {
  if (facts.adminExists && !facts.registrationEnabled && !facts.callerIsAdmin) return err(fail('registration_disabled', Messages.registrationDisabled));
  if (facts.emailTaken) return err(fail('conflict', Messages.emailExists));
  if (facts.usernameTaken) return err(fail('conflict', Messages.usernameExists));
  if (!facts.adminExists) return ok('admin');
  if (input.role === '' || input.role === 'user') return ok('user');
  if (input.role !== 'admin') return err(fail('invalid_role', Messages.invalidRoleRegister));
  if (!facts.callerIsAdmin) return err(fail('admin_create_forbidden', Messages.adminCreateForbidden));
  return ok('admin');
}

/** `allLibraries`: what the new account sees until an admin grants more (the `new_users_see_all_libraries` setting). */
export function userRegistered(userId: string, input: RegisterInput, role: Role, registeredBy: string | null, allLibraries: boolean): Ev {
  return {
    type: 'identity.user-registered.v1',
    data: {
      user_id: userId,
      email: input.email,
      username: input.username,
      first_name: input.first_name,
      last_name: input.last_name,
      role,
      theme: DEFAULT_THEME,
      timezone: DEFAULT_TIMEZONE,
      max_devices: DEFAULT_MAX_DEVICES,
      registered_by: registeredBy,
      all_libraries: allLibraries,
      library_ids: [],
    },
  };
}
