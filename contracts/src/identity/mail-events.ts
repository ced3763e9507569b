// Identity's events for what mail makes possible (issue 47): password reset links, invitations and
// each person's e-reader address. A link's secret never enters the log: only its SHA-256 (the
// secret is 256 random bits, so the hash cannot be turned back into it).
import Type from 'typebox';

const Uuid = Type.String({ format: 'uuid' });
const Role = Type.Union([Type.Literal('user'), Type.Literal('admin')]);

/** A reset link was made for the account (and mailed by the gateway): it works once, until `expires_at`. */
export const PasswordResetRequested = Type.Object({ user_id: Uuid, token_hash: Type.String(), expires_at: Type.String() });

/** A reset link set a new password: it and every other open link of the account end. */
export const PasswordResetUsed = Type.Object({ user_id: Uuid, token_hash: Type.String() });

/** An admin invited an address: the link makes an account with this role and library access. */
export const InvitationCreated = Type.Object({
  invitation_id: Uuid,
  email: Type.String(),
  role: Role,
  all_libraries: Type.Boolean(),
  library_ids: Type.Array(Uuid),
  token_hash: Type.String(),
  expires_at: Type.String(),
  invited_by: Uuid,
});

/** The invitation's link made the account `user_id` (its `user-registered` event is in the same transaction). */
export const InvitationAccepted = Type.Object({ invitation_id: Uuid, user_id: Uuid });

/** An admin withdrew an invitation before it was used. */
export const InvitationRevoked = Type.Object({ invitation_id: Uuid, revoked_by: Uuid });

/** Where a person's books are mailed ('' when they cleared it). */
export const EreaderAddressChanged = Type.Object({ user_id: Uuid, address: Type.String() });

/** A person asked for a book to be mailed to their e-reader address: one send, tried until it is sent or fails for good. */
export const BookSendRequested = Type.Object({
  send_id: Uuid,
  user_id: Uuid,
  item_id: Uuid,
  title: Type.String(),
  format: Type.String(),
  file_name: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  address: Type.String(),
  /** the book's format the mailed file is converted from (`format` is what is mailed), when the address takes none it has */
  convert_from: Type.Optional(Type.String()),
});

/** A gateway took the send to try it now; another may take it only after `until` (a gateway that died mid-send). */
export const BookSendClaimed = Type.Object({ send_id: Uuid, until: Type.String() });

/**
 * What came of one try: `sent`; `retrying` (the server may take it later: tried again at
 * `next_attempt_at`); or `failed` for good (the server refused it, or the tries ran out).
 */
export const BookSendAttempted = Type.Object({
  send_id: Uuid,
  attempt: Type.Integer({ minimum: 1 }),
  outcome: Type.Union([Type.Literal('sent'), Type.Literal('retrying'), Type.Literal('failed')]),
  detail: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
});

export const MailIdentityEvents = {
  'identity.password-reset-requested.v1': PasswordResetRequested,
  'identity.password-reset-used.v1': PasswordResetUsed,
  'identity.invitation-created.v1': InvitationCreated,
  'identity.invitation-accepted.v1': InvitationAccepted,
  'identity.invitation-revoked.v1': InvitationRevoked,
  'identity.ereader-address-changed.v1': EreaderAddressChanged,
  'identity.book-send-requested.v1': BookSendRequested,
  'identity.book-send-claimed.v1': BookSendClaimed,
  'identity.book-send-attempted.v1': BookSendAttempted,
} as const;
