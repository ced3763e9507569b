// Bindery's own page script (htmx does the rest), bundled as /assets/app.<hash>.js.
import { listenLive } from './live-channel';

// 0. Every request htmx makes carries the session's CSRF token from the page's <meta>: the proof a
//    write signed in by the cookie needs (htmx only sends to this origin: selfRequestsOnly).
document.addEventListener('htmx:configRequest', (e) => {
  const token = document.querySelector<HTMLMetaElement>('meta[name="csrf-token"]')?.content;
  if (token) e.detail.headers['X-CSRF-Token'] = token;
});

// 1. The API answers in JSON where the interface says so (the login's 401 even to htmx, messages
//    of writes): show an error's or a confirmation's message as text, never as HTML. HTML error
//    fragments (lock messages, validation) swap in as the API words them.
document.addEventListener('htmx:beforeSwap', (e) => {
  const xhr = e.detail.xhr;
  const type = xhr.getResponseHeader('content-type') || '';
  const failed = xhr.status >= 400;
  if (!type.includes('application/json')) {
    if (failed) {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
    return;
  }
  // handled here: no swap, and not an error for htmx to log
  e.detail.shouldSwap = false;
  e.detail.isError = false;
  let message = failed ? `The request failed (${xhr.status}).` : 'Saved.';
  try {
    const body: unknown = JSON.parse(xhr.responseText);
    // an error in the page's language when the gateway has it (message_localized), else the API's words
    if (body && typeof body === 'object' && 'message_localized' in body && typeof body.message_localized === 'string') message = body.message_localized;
    else if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') message = body.error;
    else if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') message = body.message;
  } catch {
    // not JSON after all: keep the generic message
  }
  const note = document.createElement('div');
  note.className = failed ? 'alert alert-error' : 'alert alert-success';
  note.setAttribute('role', failed ? 'alert' : 'status');
  note.textContent = message;
  e.detail.target.replaceChildren(note);
});

// 2. A form marked data-redirect-to goes there once its request succeeded (sign out); one marked
//    data-reload reloads the page (a changed theme); data-reset-on-success clears it (passwords).
document.addEventListener('htmx:afterRequest', (e) => {
  if (!e.detail.successful) return;
  const elt = e.detail.elt;
  const form = elt.closest ? elt.closest('form') : null;
  const el = form || elt;
  if (!(el instanceof HTMLElement)) return;
  const to = el.dataset.redirectTo;
  if (to && to.startsWith('/') && !to.startsWith('//')) location.assign(to);
  else if (el.dataset.reload !== undefined) location.reload();
  else if (el.dataset.resetOnSuccess !== undefined && el instanceof HTMLFormElement) el.reset();
});

// 3. JSON bodies for the API's JSON routes: `name[]` collects a list, `name:number` a number,
//    `name:bool` true or false, and
//    `{name}` in the request path takes that field's value (a collection's id, say).
htmx.defineExtension('bindery-json', {
  onEvent(name, evt) {
    if (name !== 'htmx:configRequest') return true;
    const d: HtmxRequestConfig = evt.detail;
    d.path = d.path.replace(/\{(\w+)\}/g, (_, k: string) => {
      const v = d.formData.get(k);
      d.formData.delete(k);
      return encodeURIComponent(typeof v === 'string' ? v : '');
    });
    d.headers['Content-Type'] = 'application/json';
    return true;
  },
  encodeParameters(xhr, parameters) {
    xhr.overrideMimeType('text/json');
    const out: Record<string, unknown> = {};
    parameters.forEach((v, k) => {
      if (k.endsWith('[]')) {
        // an empty value stands for an empty list (a form cannot send none)
        const prior = out[k.slice(0, -2)];
        const list = Array.isArray(prior) ? prior : [];
        if (v !== '') list.push(v);
        out[k.slice(0, -2)] = list;
      } else if (k.endsWith(':number')) out[k.slice(0, -7)] = Number(v);
      else if (k.endsWith(':bool')) out[k.slice(0, -5)] = v === 'true';
      else out[k] = v;
    });
    return JSON.stringify(out);
  },
});

// 4. An address the server could not write whole (its Host is not one it may believe): a path in
//    `data-origin`, completed with the address this page was loaded from.
const fillOrigins = (root: ParentNode) => {
  for (const el of root.querySelectorAll<HTMLElement>('[data-origin]')) {
    if (el.textContent?.trim().startsWith('/')) el.textContent = location.origin + el.dataset.origin;
  }
};
document.addEventListener('DOMContentLoaded', () => fillOrigins(document));
document.addEventListener('htmx:afterSwap', (e) => fillOrigins(e.detail.target));
// 4. "Load more" replaces its own link: move the focus to the first book it brought, so a keyboard
//    user goes on from there instead of from the top of the page.
let booksBefore = -1;
document.addEventListener('htmx:beforeRequest', (e) => {
  if (e.detail.elt.closest?.('#load-more')) booksBefore = document.querySelectorAll('#grid .book').length;
});
document.addEventListener('htmx:afterSettle', (e) => {
  if (booksBefore < 0 || e.detail.target?.id !== 'grid') return;
  const first = document.querySelectorAll('#grid .book')[booksBefore];
  booksBefore = -1;
  first?.querySelector('a')?.focus();
});

// 5. Filters that fold away on a phone (`<details data-open-wide>`, sent closed so a phone shows
//    the books first) stand open on a wider screen.
if (window.matchMedia('(min-width: 40.01rem)').matches) for (const d of document.querySelectorAll<HTMLDetailsElement>('details[data-open-wide]')) d.open = true;

// 6. Live: a page that shows something the live channel announces (`<main data-live="progress"
//    data-live-refresh="#book-progress" [data-live-item="<id>"]>`) listens on the live channel and,
//    on an event of that topic (for that item), fetches itself again and swaps in just that part.
function livePage(main: HTMLElement): void {
  const topic = main.dataset.live ?? '';
  const part = main.dataset.liveRefresh ?? '';
  const item = main.dataset.liveItem;
  let pending = 0;
  let late = 0;
  const fetchPart = () => {
    if (document.querySelector(part)) void htmx.ajax('get', location.pathname + location.search, { target: part, select: part, swap: 'outerHTML' });
  };
  const refresh = () => {
    // several events in a burst: one refresh, and one more after the burst (a transient signal, a
    // scan's progress say, can arrive before the read models show what it announces)
    clearTimeout(pending);
    clearTimeout(late);
    pending = setTimeout(fetchPart, 150);
    late = setTimeout(fetchPart, 1500);
  };
  listenLive({
    topics: [topic],
    onState: (state) => {
      main.dataset.liveState = state;
    },
    onEvent: (msg) => {
      if (msg.topic === topic && (!item || msg.data?.media_item_id === item)) refresh();
    },
  });
}
const liveMain = document.querySelector<HTMLElement>('main[data-live]');
if (liveMain) livePage(liveMain);
