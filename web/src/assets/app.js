// Bindery's own page script (htmx does the rest). The login API answers its 401 as JSON even to
// htmx, and a rate limit may be JSON too: show an error response's message as text (never as HTML),
// and let HTML error fragments (lock messages, validation) swap in as the API words them.
document.addEventListener('htmx:beforeSwap', (e) => {
  const xhr = e.detail.xhr;
  if (xhr.status < 400) return;
  const type = xhr.getResponseHeader('content-type') || '';
  if (!type.includes('application/json')) {
    e.detail.shouldSwap = true;
    e.detail.isError = false;
    return;
  }
  // handled here: no swap, and not an error for htmx to log
  e.detail.shouldSwap = false;
  e.detail.isError = false;
  let message = `The request failed (${xhr.status}).`;
  try {
    const body = JSON.parse(xhr.responseText);
    if (body && typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON after all: keep the generic message
  }
  const alert = document.createElement('div');
  alert.className = 'alert alert-error';
  alert.setAttribute('role', 'alert');
  alert.textContent = message;
  e.detail.target.replaceChildren(alert);
});

// A form marked data-redirect-to goes there once its request succeeded (sign out).
document.addEventListener('htmx:afterRequest', (e) => {
  const to = e.detail.elt.dataset?.redirectTo;
  if (to && e.detail.successful && to.startsWith('/') && !to.startsWith('//')) location.assign(to);
});

// A form marked data-reset-on-success is cleared after it succeeded (the password change).
document.addEventListener('htmx:afterRequest', (e) => {
  if (e.detail.successful && e.detail.elt.matches?.('form[data-reset-on-success]')) e.detail.elt.reset();
});
