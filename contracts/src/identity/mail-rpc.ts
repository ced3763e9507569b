// Identity's requests for password reset links, invitations and e-reader addresses (issue 47).
// Identity makes and checks the links; the gateway mails them (it alone knows the server's address).
import Type from 'typebox';
import { Role } from './events';
import { AuthResult } from './session';

// the same shape as rpc.ts's Caller, declared here because rpc.ts spreads this module at load time
const Caller = Type.Object({ user_id: Type.String(), role: Role, jti: Type.Optional(Type.String()), exp: Type.Optional(Type.Integer()) });
const Input = Type.Record(Type.String(), Type.Unknown());

export const MailRequests = {
  /** input: `email`. Answers `{mail}`: what to mail, or null (no such account, or its limit reached) — never said to the requester */
  'password-reset-request': Type.Object({ input: Input }),
  /** input: `token`, `new_password`, `confirm_password`; ends every session of the account */
  'password-reset-complete': Type.Object({ input: Input }),
  /** input: `email`, `role`, `all_libraries`, `library_ids` (the gateway has checked the ids name libraries) */
  'invitation-create': Type.Object({ caller: Caller, input: Input }),
  'invitations-list': Type.Object({ caller: Caller }),
  'invitation-revoke': Type.Object({ caller: Caller, invitation_id: Type.String() }),
  /** what an open invitation's link offers (its address and role), or 404 */
  'invitation-peek': Type.Object({ token: Type.String({ maxLength: 256 }) }),
  /** input: `token`, `username`, `password`, `confirm_password`, optional names; answers a session as register does */
  'invitation-accept': Type.Object({ input: Input, client: Type.Optional(Type.String()) }),
  'ereader-get': Type.Object({ caller: Caller }),
  /** input: `address` ('' clears it) */
  'ereader-set': Type.Object({ caller: Caller, input: Input }),
  /** input: `item_id`, `title`, `format`, `file_name`, `size`, optional `convert_from` (the gateway has checked the caller sees the item and chosen its file); to the caller's e-reader address */
  'send-create': Type.Object({ caller: Caller, input: Input }),
  /** the caller's sends, newest first */
  'sends-list': Type.Object({ caller: Caller }),
  /** a gateway's worker: takes up to `limit` sends that are due (each for `lease_ms`) and answers them */
  'sends-claim': Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100 }), lease_ms: Type.Integer({ minimum: 1000, maximum: 600_000 }) }),
  /** a gateway's worker: what came of trying a send it took */
  'send-result': Type.Object({
    send_id: Type.String(),
    ok: Type.Boolean(),
    permanent: Type.Boolean(),
    detail: Type.String({ maxLength: 1000 }),
  }),
} as const;

/** The refusal of a send when the person has no e-reader address. */
export const NO_EREADER_ADDRESS = 'set your e-reader address on your profile first';

/** One send of a book to an e-reader address, as its owner sees it (and the worker takes it). */
export const BookSend = Type.Object({
  id: Type.String(),
  user_id: Type.String(),
  item_id: Type.String(),
  title: Type.String(),
  format: Type.String(),
  file_name: Type.String(),
  size: Type.Integer(),
  address: Type.String(),
  /** the format converted from, null when the file goes as it is */
  convert_from: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  detail: Type.String(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
  /** the owner's language for the mail's words (issue 48), given to the sender that claims it */
  language: Type.Optional(Type.String()),
});
export type BookSend = Type.Static<typeof BookSend>;

/** A mail identity asks the gateway to send: the link's secret goes only here, never into the log. */
export const LinkMail = Type.Object({
  to: Type.String(),
  username: Type.String(),
  token: Type.String(),
  expires_at: Type.String(),
  /** the recipient's language for the mail's words (issue 48): their profile's; absent for none */
  language: Type.Optional(Type.String()),
});
export type LinkMail = Type.Static<typeof LinkMail>;

export const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  all_libraries: Type.Boolean(),
  library_ids: Type.Array(Type.String()),
  expires_at: Type.String(),
  created_at: Type.String(),
  invited_by: Type.String(),
});
export type Invitation = Type.Static<typeof Invitation>;

const Message = Type.Object({ message: Type.String() });
const Sends = Type.Object({ data: Type.Array(BookSend) });

export const MailResults = {
  /** `mail`: what to mail, or null (no such account, or its limit reached) */
  'password-reset-request': Type.Object({ mail: Type.Union([LinkMail, Type.Null()]) }),
  'password-reset-complete': Message,
  /** the invitation and the mail that carries its link */
  'invitation-create': Type.Object({ invitation: Invitation, mail: LinkMail }),
  'invitations-list': Type.Object({ invitations: Type.Array(Invitation) }),
  'invitation-revoke': Message,
  'invitation-peek': Type.Object({ email: Type.String(), role: Type.String(), expires_at: Type.String() }),
  'invitation-accept': AuthResult,
  'ereader-get': Type.Object({ address: Type.String() }),
  'ereader-set': Type.Object({ message: Type.String(), address: Type.String() }),
  'send-create': BookSend,
  'sends-list': Sends,
  'sends-claim': Sends,
  'send-result': BookSend,
} as const;
