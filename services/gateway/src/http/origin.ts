// Where a request says it comes from, and which address Bindery may write into what it answers.
// A browser names the page that made a request in `Origin` (or `Referer`): a sign-in form posted
// from another site, or a WebSocket opened by another site's script with our cookie, is refused.
// The `Host` header is the client's to write: it goes into absolute links (OpenSearch templates,
// device verification addresses) only when it is a plain URL authority (`host[:port]`: no user
// info, no path, a port 1..65535) naming an address of this server's own or one of the configured
// public addresses (`PUBLIC_URL`); otherwise answers carry paths, or the first public address.
import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { FastifyRequest } from 'fastify';

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** `host[:port]` of an absolute http(s) URL, lower-cased, or null when it is none (`null`, garbage). */
function hostOf(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.host.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** Parses `PUBLIC_URL`: absolute http(s) origins separated by commas, without a trailing slash. */
export function parsePublicUrls(v: string): string[] {
  const out: string[] = [];
  for (const raw of v.split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      throw new Error(`invalid configuration: PUBLIC_URL entry ${JSON.stringify(s)} is not an absolute URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`invalid configuration: PUBLIC_URL entry ${JSON.stringify(s)} must be http or https`);
    out.push(`${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`);
  }
  return out;
}

/** a DNS name or an IPv4 address, an IPv6 address in brackets, then an optional port */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(\d{1,5}))?$/;

/**
 * A Host header's name and `host[:port]`, lower-cased, when it is a plain URL authority; null for
 * anything else (user info `a@b`, a path, a query, a bad or empty port, spaces, garbage).
 */
export function authorityOf(host: string): { name: string; authority: string } | null {
  const h = host.toLowerCase();
  const m = AUTHORITY.exec(h);
  if (!m) return null;
  const name = m[1]!;
  if (name.startsWith('[') && !isIPv6(name.slice(1, -1))) return null;
  if (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535)) return null;
  return { name, authority: h };
}

/** This machine's own addresses (loopback and every interface), as a Host header names them. */
function ownHostnames(): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '[::1]']);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.family === 'IPv6' ? `[${a.address.toLowerCase()}]` : a.address);
  return names;
}

export class Origins {
  private readonly own = ownHostnames();
  private readonly publicHosts: Set<string>;

  constructor(private readonly publicUrls: string[] = []) {
    this.publicHosts = new Set(publicUrls.map((u) => hostOf(u)!));
  }

  /**
   * The host this request was sent to (`Host`, or X-Forwarded-Host behind a trusted proxy), or null
   * when it is no plain authority.
   */
  private target(req: FastifyRequest): { name: string; authority: string } | null {
    return authorityOf(req.host);
  }

  /**
   * True when a browser says another site made this request: its Origin (or, without one, its
   * Referer) names a host other than the one the request was sent to and no public address.
   * Requests without either header (apps, curl) are not cross-site.
   */
  crossSite(req: FastifyRequest): boolean {
    const origin = header(req, 'origin');
    const from = origin ?? header(req, 'referer');
    if (from === undefined) return false;
    const host = hostOf(from);
    if (host === null) return true; // `Origin: null` (a sandboxed frame, a data: page) or worse
    return host !== this.target(req)?.authority && !this.publicHosts.has(host);
  }

  /**
   * The origin (scheme://host[:port], or a configured public address with its path) to write into
   * absolute links of this answer, or null when the Host header is not to be believed (use paths).
   */
  publicBase(req: FastifyRequest): string | null {
    const host = this.target(req);
    const asked = host && `${req.protocol}://${host.authority}`;
    if (this.publicUrls.length > 0) return (host && this.publicUrls.find((u) => u === asked || hostOf(u) === host.authority)) || this.publicUrls[0]!;
    return host && this.own.has(host.name) ? asked : null;
  }
}
