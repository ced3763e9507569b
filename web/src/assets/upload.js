// Uploading books (issue 43): every form marked data-upload (the upload page's, the library page's drop
// zone, which htmx loads later: the listeners are on the document) sends each chosen or dropped file on
// its own request, POST /api/libraries/<id>/uploads with the file as the body, one after another, each
// with a progress bar and, when it is answered, what came of it: catalogued (a link to the book), a
// duplicate (a link to the book already there) or the server's error. Cookie-signed writes carry the
// session's CSRF token from the page's <meta>, as app.js adds it to htmx's requests.
(() => {
  const csrf = () => document.querySelector('meta[name="csrf-token"]')?.content;
  const queues = new WeakMap();

  // the words come from the page, in its language: the form's data-words (JSON), each with its
  // {placeholders} filled in here
  const wordsOf = new WeakMap();
  const word = (form, key, values = {}) => {
    if (!wordsOf.has(form)) {
      let words = {};
      try {
        words = JSON.parse(form.dataset.words ?? '{}');
      } catch {
        words = {};
      }
      wordsOf.set(form, words);
    }
    return (wordsOf.get(form)[key] ?? key).replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
  };
  const localeOf = (form) => form.dataset.locale || undefined;
  const sizeText = (form, n) => {
    const f = (v) => new Intl.NumberFormat(localeOf(form), { maximumFractionDigits: 1 }).format(v);
    return n >= 2 ** 30 ? `${f(Math.round((n / 2 ** 30) * 10) / 10)} GiB` : n >= 2 ** 20 ? `${f(Math.round(n / 2 ** 20))} MiB` : `${f(Math.round(n / 1024))} KiB`;
  };

  /** One file's line in the results: its name, a progress bar, and the outcome once known. */
  const entry = (form, file) => {
    const li = document.createElement('li');
    li.className = 'upload-entry';
    const name = document.createElement('span');
    name.className = 'upload-name';
    name.textContent = `${file.name} (${sizeText(form, file.size)})`;
    const bar = document.createElement('progress');
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute('aria-label', word(form, 'uploadOf', { name: file.name }));
    const status = document.createElement('span');
    status.className = 'upload-status muted';
    status.textContent = word(form, 'waiting');
    li.append(name, bar, status);
    form.querySelector('[data-results]').append(li);
    return { li, bar, status };
  };

  /** The API's message as a sentence: a capital first, a full stop last. */
  const sentence = (s) => `${s.charAt(0).toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? '' : '.'}`;

  const say = (e, kind, text, link) => {
    e.status.className = `upload-status ${kind === 'ok' ? 'upload-ok' : kind === 'error' ? 'upload-error' : 'muted'}`;
    e.status.replaceChildren(document.createTextNode(text));
    if (link) {
      const a = document.createElement('a');
      a.href = link.href;
      a.textContent = link.text;
      e.status.append(' ', a);
    }
    e.li.dataset.outcome = kind;
  };

  /** Sends one file; resolves when it is answered (or failed). */
  const send = (form, file, e) =>
    new Promise((resolve) => {
      const library = form.querySelector('[name="library"]')?.value;
      const folder = form.querySelector('[name="folder"]')?.value ?? '0';
      const subfolder = form.querySelector('[name="subfolder"]')?.value.trim() ?? '';
      const max = Number(form.dataset.maxBytes);
      if (!library) {
        say(e, 'error', word(form, 'chooseLibrary'));
        return resolve();
      }
      if (max && file.size > max) {
        e.bar.value = 0;
        say(e, 'error', word(form, 'tooLarge', { limit: sizeText(form, max) }));
        return resolve();
      }
      const q = new URLSearchParams({ name: file.name, folder });
      if (subfolder) q.set('subfolder', subfolder);
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `/api/libraries/${encodeURIComponent(library)}/uploads?${q}`);
      xhr.setRequestHeader('Content-Type', 'application/octet-stream');
      const token = csrf();
      if (token) xhr.setRequestHeader('X-CSRF-Token', token);
      say(e, 'busy', word(form, 'uploading'));
      xhr.upload.addEventListener('progress', (p) => {
        if (p.lengthComputable) e.bar.value = Math.round((p.loaded / p.total) * 100);
      });
      xhr.upload.addEventListener('load', () => {
        e.bar.value = 100;
        say(e, 'busy', word(form, 'checking'));
      });
      xhr.addEventListener('load', () => {
        let body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch {
          // not JSON: the status says enough
        }
        if (xhr.status === 201 && body) {
          const as = body.renamed ? 'As' : '';
          const values = { name: body.name, error: body.error };
          if (body.status === 'catalogued') say(e, 'ok', word(form, `catalogued${as}`, values), { href: body.url, text: word(form, 'open') });
          else if (body.status === 'issue') say(e, 'error', word(form, `issue${as}`, values));
          else say(e, 'ok', word(form, `stored${as}`, values));
        } else if (xhr.status === 409 && body?.url) say(e, 'error', sentence(body.error), { href: body.url, text: word(form, 'openThere') });
        else if (xhr.status === 401) say(e, 'error', word(form, 'signedOut'));
        else say(e, 'error', body?.error ? sentence(body.error) : word(form, 'failed', { status: xhr.status }));
        resolve();
      });
      xhr.addEventListener('error', () => {
        say(e, 'error', word(form, 'lost'));
        resolve();
      });
      xhr.send(file);
    });

  /** Queues files on a form: each gets its line at once, and is sent when the ones before it are done. */
  const upload = (form, files) => {
    const list = [...files];
    if (list.length === 0) return;
    let chain = queues.get(form) ?? Promise.resolve();
    for (const file of list) {
      const e = entry(form, file);
      chain = chain.then(() => send(form, file, e));
    }
    queues.set(form, chain);
  };

  document.addEventListener('submit', (ev) => {
    const form = ev.target.closest?.('form[data-upload]');
    if (!form) return;
    ev.preventDefault();
    const input = form.querySelector('input[type="file"]');
    if (!input || input.files.length === 0) {
      input?.focus();
      return;
    }
    upload(form, input.files);
    input.value = '';
  });

  // dropping files anywhere on the form: uploaded at once to the library and folder it shows
  document.addEventListener('dragover', (ev) => {
    const form = ev.target.closest?.('form[data-upload]');
    if (!form || !ev.dataTransfer?.types.includes('Files')) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = 'copy';
    form.classList.add('dragging');
  });
  document.addEventListener('dragleave', (ev) => {
    const form = ev.target.closest?.('form[data-upload]');
    if (form && !form.contains(ev.relatedTarget)) form.classList.remove('dragging');
  });
  document.addEventListener('drop', (ev) => {
    const form = ev.target.closest?.('form[data-upload]');
    if (!form || !ev.dataTransfer?.files.length) return;
    ev.preventDefault();
    form.classList.remove('dragging');
    upload(form, ev.dataTransfer.files);
  });
})();
