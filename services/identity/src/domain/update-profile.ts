// UpdateProfile (self and by id) and the single-field setters (theme, username, email).
import { fail, Identity, Messages, type Failure, type Result, err, ok } from '@bindery/contracts';
import { stateProfiles, type Ev, type Role, type UserState } from './user';
import { emailProblem, invalidRequest, isTimezone, length, NAME_MAX, readStrings, THEME_MAX, usernameProblem, validation } from './validate';

export interface ProfileInput {
  username: string;
  email: string;
  first_name: string;
  last_name: string;
  theme: string;
  timezone: string;
  /** a language of LANGUAGES, `auto` to go back to the browser's, '' when not given */
  language: string;
  role: string;
  /** let admins see the person's reading statistics (decision 120); null when not given */
  share_statistics: boolean | null;
}

/** the language a person sends to go back to their browser's (issue 48) */
export const AUTO_LANGUAGE = 'auto';

const FIELDS = ['username', 'email', 'first_name', 'last_name', 'theme', 'timezone', 'language', 'role'] as const;

/** Rule 2-3: bind, validate; empty strings count as absent. */
export function parseProfile(raw: Record<string, unknown>): Result<ProfileInput> {
  const f = readStrings(raw, FIELDS);
  if (!f) return err(invalidRequest());
  if (f.username !== '') {
    const p = usernameProblem(f.username.trim());
    if (p) return err(validation(p));
  }
  if (f.email !== '') {
    const p = emailProblem(f.email.trim());
    if (p) return err(validation(p));
  }
  for (const k of ['first_name', 'last_name'] as const) if (length(f[k]) > NAME_MAX) return err(validation(`${k} must be at most ${NAME_MAX} characters`));
  if (length(f.theme) > THEME_MAX) return err(validation(`theme must be at most ${THEME_MAX} characters`));
  const language = f.language.trim();
  if (language !== '' && language !== AUTO_LANGUAGE && !(Identity.LANGUAGES as readonly string[]).includes(language)) {
    return err(validation(`language must be one of ${[...Identity.LANGUAGES, AUTO_LANGUAGE].join(', ')}`));
  }
  const share = raw.share_statistics ?? null;
  if (share !== null && typeof share !== 'boolean') return err(validation('share_statistics must be true or false'));
  const role = f.role.trim().toLowerCase();
  if (role !== '' && role !== 'user' && role !== 'admin') return err(fail('invalid_role', Messages.invalidRoleUpdate));
  return ok({ ...f, username: f.username.trim(), email: f.email.trim(), timezone: f.timezone.trim(), language, role, share_statistics: share });
}

export interface ProfileFacts {
  adminCount: number;
  /** id of the account already holding the requested username / email (case-insensitive), if any */
  usernameOwner: string | null;
  emailOwner: string | null;
}

export interface Decision {
  events: Ev[];
  error: Failure | null;
}

/**
 * Rule 7: field groups in the order role, username, timezone, email, names, theme (then language and
 * the sharing of reading statistics, which cannot fail here). A failure part-way keeps the groups
 * decided before it (they are committed), as the spec says.
 */
export function decideProfileUpdate(user: UserState, input: ProfileInput, byId: boolean, callerId: string, facts: ProfileFacts): Decision {
  const events: Ev[] = [];
  const stop = (error: Failure): Decision => ({ events: stateProfiles(user, events), error });
  const changes: Record<string, string | boolean> = {};
  const flush = () => {
    if (Object.keys(changes).length === 0) return;
    events.push({ type: 'identity.profile-changed.v1', data: { user_id: user.id, changes: { ...changes }, changed_by: callerId } });
    for (const k of Object.keys(changes)) delete changes[k];
  };

  // Rule 2: a role (already checked to be `user` or `admin`) is applied only by id; self mode
  // ignores it whoever asks, and applies the other fields.
  if (byId && input.role !== '' && input.role !== user.role) {
    if (user.role === 'admin' && input.role === 'user' && facts.adminCount <= 1) return stop(fail('last_admin', Messages.lastAdminDemote));
    events.push({ type: 'identity.role-changed.v1', data: { user_id: user.id, role: input.role as Role, previous_role: user.role, changed_by: callerId } });
  }
  if (input.username !== '' && input.username !== user.username) {
    if (facts.usernameOwner && facts.usernameOwner !== user.id) return stop(fail('conflict', Messages.usernameTaken));
    changes.username = input.username;
  }
  if (input.timezone !== '') {
    if (!isTimezone(input.timezone)) {
      flush();
      return stop(fail('invalid_timezone', Messages.invalidTimezone));
    }
    if (input.timezone !== user.timezone) changes.timezone = input.timezone;
  }
  if (input.email !== '' && input.email !== user.email) {
    if (facts.emailOwner && facts.emailOwner !== user.id) {
      flush();
      return stop(fail('conflict', Messages.emailTaken));
    }
    changes.email = input.email;
  }
  if (input.first_name !== '' || input.last_name !== '') {
    // either name given writes both; the omitted one becomes unset
    if (input.first_name !== user.first_name) changes.first_name = input.first_name;
    if (input.last_name !== user.last_name) changes.last_name = input.last_name;
  }
  if (input.theme !== '' && input.theme !== user.theme) changes.theme = input.theme;
  if (input.language !== '') {
    const language = input.language === AUTO_LANGUAGE ? '' : input.language;
    if (language !== user.language) changes.language = language;
  }
  // the person's own consent (decision 120): an admin's update by id cannot give it for them, nor take it back
  if (!byId && input.share_statistics !== null && input.share_statistics !== user.share_statistics) changes.share_statistics = input.share_statistics;
  flush();
  return { events: stateProfiles(user, events), error: null };
}

/** PUT /api/auth/{theme,username,email}: one required field. */
export function parseField(field: 'theme' | 'username' | 'email', raw: Record<string, unknown>): Result<string> {
  const f = readStrings(raw, [field]);
  if (!f) return err(invalidRequest());
  const v = field === 'theme' ? f.theme : f[field].trim();
  if (v === '') return err(validation(`${field} is required`));
  const p = field === 'username' ? usernameProblem(v) : field === 'email' ? emailProblem(v) : length(v) > THEME_MAX ? `theme must be at most ${THEME_MAX} characters` : null;
  if (p) return err(validation(p));
  return ok(v);
}
