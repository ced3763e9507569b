export interface Res {
    status: number;
    headers: Headers;
    text: string;
    json: any;
    cookies: string[];
    /** the raw body bytes */
    bytes: Buffer;
}
export interface Req {
    body?: unknown;
    form?: Record<string, string>;
    raw?: string;
    contentType?: string;
    token?: string;
    cookie?: string;
    headers?: Record<string, string>;
}
export declare function client(base: string): (method: string, path: string, r?: Req) => Promise<Res>;
