// Secrets some clients can only carry in a URL never reach a log line: a Kobo's store token (the
// path `/kobo/<token>` written in its configuration, also its bearer token) and a reader key
// (`/opds/key/<key>`). The process's logger runs every line through `scrubSecrets` as it writes it
// (embedded/src/boot.ts), so a `url` field, fastify's own warnings that quote the URL and an
// error's message or stack are all covered, whoever wrote them.
import { DeviceSync } from '@bindery/contracts';

export const REDACTED = '[redacted]';

/** where a URL's next segment is a secret */
const SECRET_SEGMENT = /(\/kobo\/|\/opds\/key\/)[^/?#\s"'\\]+/g;
/** a source file under a `kobo/` folder, in a stack trace: not a token */
const SOURCE_FILE = /^[\w.-]+\.[cm]?[jt]sx?(?::\d+)*\)?$/;
/** our credentials by their prefixes (a Kobo token, a device credential), wherever they stand */
const PREFIXED = new RegExp(`\\b(${DeviceSync.KOBO_TOKEN_PREFIX}|${DeviceSync.TOKEN_PREFIX})[A-Za-z0-9_-]+`, 'g');

/** The line with every Kobo token, reader key and device credential replaced by `[redacted]`. */
export function scrubSecrets(line: string): string {
  return line
    .replace(SECRET_SEGMENT, (whole, prefix: string) => (prefix === '/kobo/' && SOURCE_FILE.test(whole.slice(prefix.length)) ? whole : `${prefix}${REDACTED}`))
    .replace(PREFIXED, `$1${REDACTED}`);
}
