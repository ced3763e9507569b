// Device credentials and registration codes: 256-bit random secrets, kept only as their SHA-256
// (a secret this long needs no slow hash: nothing can be guessed from its digest).
import { createHash, randomBytes } from 'node:crypto';
import { DeviceSync } from '@bindery/contracts';

export const newDeviceToken = (): string => DeviceSync.TOKEN_PREFIX + randomBytes(32).toString('base64url');
export const newDeviceCode = (): string => randomBytes(32).toString('base64url');
/** What the approval URL carries: short enough to type, long enough not to guess (48 bits, alive for minutes). */
export const newRegistrationId = (): string => randomBytes(6).toString('hex').toUpperCase();
export const digest = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('hex');
