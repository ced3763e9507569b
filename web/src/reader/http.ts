// The reader's requests to the API: JSON with the session's CSRF token from the page's <meta>, the
// proof a cookie-authenticated write needs.
import { apiError, t } from './messages';

const csrf = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content ?? '';

/**
 * An API answer: `status` 0 when the server could not be reached; `body` null when the answer is not
 * JSON, else what the route answers (`T`, the caller's reading of it: an error's body is `{ error }`).
 */
export interface Answer<T = unknown> {
  ok: boolean;
  status: number;
  body: T | null;
}

/** One API call; resolves to {ok, status, body}, never throws. */
export async function call<T = unknown>(method: string, url: string, body?: unknown, keepalive = false): Promise<Answer<T>> {
  try {
    const r = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), 'X-CSRF-Token': csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      keepalive,
    });
    let json = null;
    try {
      json = await r.json();
    } catch {
      // not JSON
    }
    return { ok: r.ok, status: r.status, body: json };
  } catch {
    return { ok: false, status: 0, body: null };
  }
}

/** The API's words for a failure, or a generic sentence (in the page's language). */
export const failure = (r: Answer): string => {
  const b = r.body;
  if (b && typeof b === 'object' && 'error' in b && typeof b.error === 'string') return apiError(b.error);
  return r.status ? t('reader.requestFailed', { status: String(r.status) }) : t('reader.unreachable');
};
