import { type Bindery, type Mode } from '../support/bindery';
import { type Req, type Res } from '../support/http';
/**
 * One instance per mode for a test file, all started together on first use (startup is the slow
 * part, and the modes' processes start in parallel), all stopped when the file ends.
 * Call at the top level of the file; `get(mode)` belongs in that mode's beforeAll.
 */
export declare function instances(modes: Mode[]): (mode: Mode) => Promise<Bindery>;
export type Call = (method: string, path: string, r?: Req) => Promise<Res>;
/**
 * A client that follows the instance across restarts and checks what no response may ever carry:
 * a password hash.
 */
export declare function api(b: Bindery): Call;
/** A name no other test of this run uses (lower-case letters and digits, 3..50 characters). */
export declare function uniq(prefix?: string): string;
export declare const PASSWORD = "passw0rd-123";
export interface Account {
    id: string;
    email: string;
    username: string;
    password: string;
    token: string;
    refresh: string;
    role: string;
}
/** Registers an account (as `caller` when given) and checks it was created. */
export declare function register(call: Call, opts?: {
    role?: string;
    caller?: string;
    password?: string;
    name?: string;
}): Promise<Account>;
export declare function login(call: Call, loginName: string, password: string): Promise<Res>;
/** PUT /api/system/settings as an admin, expecting success. */
export declare function putSettings(call: Call, adminToken: string, body: Record<string, unknown>): Promise<Res>;
export declare function decodeJwt(token: string): {
    header: Record<string, unknown>;
    payload: Record<string, unknown>;
};
/** The secret this instance signs with (distributed: from the environment; embedded: from DATA_DIR). */
export declare function jwtSecret(b: Bindery): string;
/** The `token` Set-Cookie header of a response, or undefined. */
export declare function tokenCookie(r: Res): string | undefined;
/** Retries an assertion until it passes or the time is up (for effects that go through events). */
export declare function eventually<T>(fn: () => Promise<T>, timeoutMs?: number): Promise<T>;
export declare const UUID: RegExp;
/** A well-formed id that no account has. */
export declare const NO_SUCH_ID = "00000000-0000-4000-8000-000000000000";
/** An HTML error fragment with the JSON status (HX-Request calls). */
export declare const fragment: (r: Res, status: number, message: string) => void;
/** One account's record in the admin user listing. */
export declare function userRecord(call: Call, adminToken: string, id: string): Promise<Record<string, unknown> | undefined>;
export declare const expectError: (r: Res, status: number, message: string) => void;
export declare const expectMessage: (r: Res, message: string) => void;
