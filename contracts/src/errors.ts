// Every failure a service can report, its HTTP status and its exact user-facing text.
// The spec's Errors table is the source of these strings; contracts/test keeps them equal.
import { LOCKABLE_FIELDS } from './catalog/events';

export const Messages = {
  invalidRequest: 'invalid request',
  usernameBlank: 'username cannot be empty or whitespace',
  invalidRoleRegister: "invalid role. must be 'user' or 'admin'",
  invalidRoleUpdate: "invalid role. must be 'admin' or 'user'",
  invalidUserId: 'invalid user id',
  userIdRequired: 'user id required',
  lastAdminDemote: 'cannot demote the last admin',
  lastAdminDelete: 'cannot delete the last admin account',
  invalidTimezone: 'Invalid timezone',
  currentPasswordRequired: 'current password required',
  passwordMismatch: 'passwords do not match',
  invalidCredentials: 'invalid credentials',
  currentPasswordIncorrect: 'current password is incorrect',
  adminRequired: 'admin access required',
  registrationDisabled: 'registration is disabled on this server',
  adminCreateForbidden: 'only administrators can create admin accounts',
  userNotFound: 'user not found',
  emailExists: 'email already exists',
  usernameExists: 'username already exists',
  usernameTaken: 'username already taken',
  emailTaken: 'email already taken',
  failedToCheckUsers: 'failed to check existing users',
  failedToHashPassword: 'failed to hash password',
  // used by the reading service, which creates the default collections when a user registers
  failedToCreateDefaultCollections: 'failed to create default collections',
  failedToGenerateToken: 'failed to generate token',
  failedToGenerateRefreshToken: 'failed to generate refresh token',
  failedToLoadProfile: 'failed to load profile',
  // Decided by Bindery where the spec is silent (docs/decisions.md).
  unauthorized: 'authentication required',
  invalidToken: 'invalid or expired token',
  /** issue 43: editing metadata and covers needs an admin or the can_edit_metadata permission */
  editorRequired: 'metadata editing access required',
  // the lockable fields (authors standing for the contributors of the author role), as they are declared
  resetFieldsInvalid: `reset_fields must be a list of: ${LOCKABLE_FIELDS.flatMap((f) => (f === 'contributors' ? ['authors', f] : [f])).join(', ')}`,
  coverImageInvalid: 'the cover must be a JPEG, PNG, WebP or GIF image of at most 20 MB and 100 million pixels',
  coverPageInvalid: 'page must be a page number of the book (1 is the first)',
  invalidRefreshToken: 'invalid or expired refresh token',
  sessionNotFound: 'session not found',
  invalidSessionId: 'invalid session id',
  notFound: 'not found',
  serviceUnavailable: 'service unavailable',
  payloadTooLarge: 'request body too large',
  unsupportedMediaType: 'unsupported content type',
  internal: 'internal server error',
  // Catalog (libraries, media items, files, duplicate content): the spec shows no texts here.
  invalidLibraryId: 'invalid library id',
  libraryNotFound: 'library not found',
  libraryHasNoFolders: 'library has no folders',
  invalidMediaItemId: 'invalid media item id',
  mediaItemNotFound: 'media item not found',
  coverNotFound: 'cover not found',
  /** an item without an EPUB the catalog has indexed: no sections for the web reader */
  sectionsNotFound: 'no indexed EPUB for this item',
  fileNotFound: 'file not found',
  invalidConflictId: 'invalid hash conflict id',
  hashConflictNotFound: 'hash conflict not found',
  hashConflictAlreadyResolved: 'hash conflict already resolved',
  pathOutsideAllowed: 'path is outside the allowed folders',
  // Library folders that would expose the server's own files (docs/decisions.md).
  folderIsSystem: 'folder is a system folder',
  folderOverlapsDataDir: 'folder must not be, contain or lie inside the data directory',
  // Hostile input and account hardening (docs/decisions.md).
  bodyTooDeep: 'request body is nested too deeply',
  malformedUrl: 'malformed URL',
  badRequest: 'bad request',
  requestTimeout: 'request timeout',
  headersTooLarge: 'request headers too large',
  usernameCharacters: 'username must not contain control or bidirectional formatting characters',
  crossSiteRefused: "cookie-authenticated requests must carry the session's X-CSRF-Token header",
  /** a sign-in or a cookie's WebSocket whose Origin (or Referer) names another site */
  crossOriginRefused: 'requests from another site are refused',
} as const;

/** A string with NUL or another control character (tab, line feed and carriage return are allowed). */
export const controlCharacterMessage = (field: string) => `${field} must not contain control characters`;
/** A string with a lone UTF-16 surrogate: no UTF-8 store can hold it. */
export const malformedTextMessage = (field: string) => `${field} must be valid Unicode text`;
export const rateLimitedMessage = (seconds: number) => `too many requests: try again in ${seconds} seconds`;

export const accountLockedMessage = (minutes: number) => `Account locked. Try again in ${minutes} minutes`;
export const tooManyAttemptsMessage = (minutes: number) => `Too many failed attempts. Account locked for ${minutes} minutes`;

export type ErrorCode =
  | 'invalid_request'
  | 'validation'
  | 'username_blank'
  | 'invalid_role'
  | 'invalid_user_id'
  | 'user_id_required'
  | 'last_admin'
  | 'invalid_timezone'
  | 'current_password_required'
  | 'password_mismatch'
  | 'invalid_credentials'
  | 'current_password_incorrect'
  | 'unauthorized'
  | 'admin_required'
  | 'registration_disabled'
  | 'admin_create_forbidden'
  | 'forbidden'
  | 'user_not_found'
  | 'not_found'
  | 'conflict'
  | 'login_locked'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unprocessable'
  | 'internal'
  | 'service_unavailable';

/** A failure travels between services as a value: a code for the status, the exact text for the body. */
export interface Failure {
  code: ErrorCode;
  message: string;
}

export const fail = (code: ErrorCode, message: string): Failure => ({ code, message });

/** One exhaustive map from failure code to HTTP status: a new code does not compile until it is placed here. */
export function httpStatusOf(code: ErrorCode): number {
  switch (code) {
    case 'invalid_request':
    case 'validation':
    case 'username_blank':
    case 'invalid_role':
    case 'invalid_user_id':
    case 'user_id_required':
    case 'last_admin':
    case 'invalid_timezone':
    case 'current_password_required':
    case 'password_mismatch':
      return 400;
    case 'invalid_credentials':
    case 'current_password_incorrect':
    case 'unauthorized':
      return 401;
    case 'admin_required':
    case 'registration_disabled':
    case 'admin_create_forbidden':
    case 'forbidden':
      return 403;
    case 'user_not_found':
    case 'not_found':
      return 404;
    case 'conflict':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'unprocessable':
      return 422;
    case 'login_locked':
    case 'rate_limited':
      return 429;
    case 'internal':
      return 500;
    case 'service_unavailable':
      return 503;
  }
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: Failure };
export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const err = <T = never>(error: Failure): Result<T> => ({ ok: false, error });
