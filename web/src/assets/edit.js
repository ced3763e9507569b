// Editing books (issue 43): the cover upload of the edit page, and the selection and bulk bar of the
// library grid and the series page. Everything here only adds to pages that work without it.

// 1. Cover upload: a form marked data-cover-upload sends its file as the body of a PUT to that
//    address (the API takes the image itself, not a form), with the session's CSRF token; the
//    API's message is shown as text, and a success goes to data-done (the page with the new cover).
document.addEventListener('submit', async (e) => {
  const form = e.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.coverUpload) return;
  e.preventDefault();
  const input = form.querySelector('input[type="file"]');
  const out = form.querySelector('.outcome');
  const say = (text, failed) => {
    const note = document.createElement('div');
    note.className = failed ? 'alert alert-error' : 'alert alert-success';
    note.setAttribute('role', failed ? 'alert' : 'status');
    note.textContent = text;
    out?.replaceChildren(note);
  };
  // the words come from the page, in its language (data-words; {status} is the answer's status)
  let words = {};
  try {
    words = JSON.parse(form.dataset.words ?? '{}');
  } catch {
    words = {};
  }
  const word = (key, status) => (words[key] ?? '').replace('{status}', String(status ?? ''));
  const file = input?.files?.[0];
  if (!file) return say(word('choose'), true);
  const button = form.querySelector('button[type="submit"]');
  if (button) button.disabled = true;
  say(word('uploading'), false);
  try {
    const token = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
    const r = await fetch(form.dataset.coverUpload, {
      method: 'PUT',
      headers: { 'Content-Type': file.type || 'application/octet-stream', 'X-CSRF-Token': token },
      body: file,
      credentials: 'same-origin',
    });
    let body = null;
    try {
      body = await r.json();
    } catch {
      body = null;
    }
    if (!r.ok) return say(body && typeof body.error === 'string' ? body.error : word('failed', r.status), true);
    const done = form.dataset.done;
    if (done?.startsWith('/') && !done.startsWith('//')) location.assign(done);
    else say(word('saved'), false);
  } catch {
    say(word('unreachable'), true);
  } finally {
    if (button) button.disabled = false;
  }
});

// 2. The selection: shift-click on a cover's checkbox ticks (or clears) every one between it and the
//    last one clicked; the bar says how many are chosen; "all matching" stands for the ticks; after
//    an action succeeded the grid is fetched again (its books show the change) and the ticks clear.
(() => {
  const form = document.getElementById('selection');
  if (!form) return;
  const boxes = () => [...document.querySelectorAll('input.pick-box[form="selection"]')];
  const all = document.getElementById('select-all');
  const count = document.getElementById('selection-count');
  const clear = document.getElementById('selection-clear');
  let last = null;
  // the words come from the page, in its language (data-words; {n} is the count of ticked books)
  const words = (() => {
    try {
      return JSON.parse(form.dataset.words ?? '{}');
    } catch {
      return {};
    }
  })();
  const locale = form.dataset.locale || undefined;
  const plural = new Intl.PluralRules(locale);
  const say = (key, n) => (words[key] ?? '').replace('{n}', new Intl.NumberFormat(locale).format(n));
  const update = () => {
    const n = boxes().filter((b) => b.checked).length;
    const total = Number(all?.dataset.total ?? '0');
    if (all?.checked) count.textContent = say(plural.select(total) === 'one' && total === 1 ? 'allOne' : 'allMany', total);
    else count.textContent = n === 0 ? say('none', n) : say(n === 1 && plural.select(n) === 'one' ? 'one' : 'many', n);
    if (clear) clear.hidden = n === 0 && !all?.checked;
    for (const b of boxes()) b.disabled = !!all?.checked;
  };
  document.addEventListener('click', (e) => {
    const box = e.target;
    if (!(box instanceof HTMLInputElement) || !box.classList.contains('pick-box')) return;
    if (e.shiftKey && last && last !== box) {
      const list = boxes();
      const [a, b] = [list.indexOf(last), list.indexOf(box)].sort((x, y) => x - y);
      if (a >= 0) for (const other of list.slice(a, b + 1)) other.checked = box.checked;
    }
    last = box;
  });
  document.addEventListener('change', (e) => {
    if (e.target === all || e.target?.classList?.contains('pick-box')) update();
  });
  clear?.addEventListener('click', () => {
    for (const b of boxes()) b.checked = false;
    if (all) all.checked = false;
    update();
    boxes()[0]?.focus();
  });
  // "Load more" brings more checkboxes: they join the count
  document.addEventListener('htmx:afterSettle', (e) => {
    if (e.detail.target?.id === 'grid') update();
  });
  document.addEventListener('htmx:afterSwap', (e) => {
    if (e.detail.target?.id !== 'selection-outcome' || !e.detail.target.querySelector('[data-bulk-done]')) return;
    // the page itself again (not as htmx: the library answers htmx with its next books only)
    fetch(location.pathname + location.search, { credentials: 'same-origin' })
      .then((r) => (r.ok ? r.text() : null))
      .then((html) => {
        const fresh = html && new DOMParser().parseFromString(html, 'text/html').getElementById('grid');
        const grid = document.getElementById('grid');
        if (fresh && grid) grid.replaceChildren(...fresh.childNodes);
      })
      .catch(() => undefined);
    for (const b of boxes()) b.checked = false;
    if (all) all.checked = false;
    update();
  });
  update();
})();
