// The reader's requests to the API: JSON with the session's CSRF token from the page's <meta>, the
// proof a cookie-authenticated write needs.

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

/** One API call; resolves to {ok, status, body} (body null when the answer is not JSON), never throws. */
export async function call(method, url, body, keepalive = false) {
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

/** The API's words for a failure, or a generic sentence. */
export const failure = (r) => (r.body && typeof r.body.error === 'string' ? r.body.error : r.status ? `the request failed (${r.status})` : 'the server could not be reached');
