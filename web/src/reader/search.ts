// Search in the book. An EPUB: foliate's view.search (a generator over the sections). A PDF: the
// gateway searches its pages' text (/opds/pages/<id>/search?q=, pdf-text.ts there) and a result goes
// to its page with the hit marked in the page's text layer. The results are a list of links with an
// excerpt each (the match marked), built as text. A PDF kept in this browser is searched in its kept
// page texts (store.ts), the same way, with or without a network. Enter searches; the arrow keys move between the
// field and the results.
import type { SearchExcerpt, View } from 'foliate-js/view.js';
import { byId } from './dom';
import { call, failure } from './http';
import { t } from './messages';

const MAX = 200;

/** The search menu's parts, with the arrow keys and the focus on opening wired. */
function menuParts() {
  const menu = byId('search-menu', HTMLDetailsElement);
  const form = byId('search-form', HTMLFormElement);
  const input = byId('search-q', HTMLInputElement);
  const status = byId('search-status');
  const results = byId('search-results');
  // the arrow keys: from the field to the results, and along them
  menu.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const links = [...results.querySelectorAll('a')];
    if (!links.length) return;
    const active = document.activeElement;
    const at = active instanceof HTMLAnchorElement ? links.indexOf(active) : -1;
    if (at < 0 && document.activeElement !== input) return;
    e.preventDefault();
    if (e.key === 'ArrowDown') links[Math.min(links.length - 1, at + 1)]?.focus();
    else if (at <= 0) input.focus();
    else links[at - 1]?.focus();
  });
  menu.addEventListener('toggle', () => {
    if (menu.open) input.focus();
  });
  return { menu, form, input, status, results };
}

/** One result: a link with where it is and its excerpt, the match marked (all as text). */
function resultLink(label: string | undefined, excerpt: SearchExcerpt, go: () => void): HTMLLIElement {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = '#';
  if (label) {
    const where = document.createElement('span');
    where.className = 'search-where';
    where.textContent = label.trim();
    a.append(where, ' ');
  }
  const mark = document.createElement('mark');
  mark.textContent = excerpt.match;
  a.append(excerpt.pre, mark, excerpt.post);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    go();
  });
  li.append(a);
  return li;
}

export interface PageHit {
  page: number;
  pre: string;
  match: string;
  post: string;
}

/** the hits of a search made in this browser (a kept PDF) */
type LocalSearch = (query: string) => Promise<{ hits: PageHit[]; truncated: boolean }>;

/** A PDF's search: the gateway's hits (or `local`'s), page by page; a result goes to its page (`go`, 0-based) and marks the match there. */
export function pageSearch({ item, count, go, local }: { item: string; count: number; go: (index: number, query: string) => void; local?: LocalSearch }): void {
  const { menu, form, input, status, results } = menuParts();
  let run = 0;
  async function find(query: string) {
    const mine = ++run;
    results.replaceChildren();
    if (query.trim().length < 2) {
      status.textContent = t('reader.search.tooShort');
      return;
    }
    status.textContent = t('reader.search.searching');
    const r = local
      ? { ok: true, status: 200, body: await local(query) }
      : await call<{ hits: PageHit[]; truncated: boolean }>('GET', `/opds/pages/${encodeURIComponent(item)}/search?q=${encodeURIComponent(query)}`);
    if (mine !== run) return;
    if (!r.ok || !r.body || !Array.isArray(r.body.hits)) {
      status.textContent = failure(r);
      return;
    }
    const hits = r.body.hits.slice(0, MAX);
    for (const h of hits) {
      const label = t('reader.pageOf', { page: h.page + 1, count });
      results.append(
        resultLink(label, { pre: String(h.pre), match: String(h.match), post: String(h.post) }, () => {
          menu.open = false;
          go(h.page, query);
        }),
      );
    }
    const n = hits.length;
    status.textContent =
      n === 0 ? t('reader.search.none', { query }) : r.body.truncated || n >= MAX ? t('reader.search.first', { max: n, query }) : t('reader.search.found', { n, query });
    menu.dataset.searched = String(mine);
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void find(input.value);
  });
}

export function search({ view, go }: { view: View; go: (target: string) => Promise<unknown> }): void {
  const { menu, form, input, status, results } = menuParts();
  let run = 0;

  const hit = (label: string | undefined, { cfi, excerpt }: { cfi: string; excerpt: SearchExcerpt }) => {
    const li = resultLink(label, excerpt, () => {
      menu.open = false;
      void go(cfi);
    });
    const a = li.querySelector('a');
    if (a) a.dataset.cfi = cfi;
    return li;
  };

  async function find(query: string) {
    const mine = ++run;
    results.replaceChildren();
    if (query.trim().length < 2) {
      view.clearSearch();
      status.textContent = t('reader.search.tooShort');
      return;
    }
    status.textContent = t('reader.search.searching');
    let n = 0;
    const it = view.search({ query });
    for await (const r of it) {
      if (mine !== run) {
        await it.return?.();
        return;
      }
      if (r === 'done') break;
      for (const s of r.subitems ?? []) {
        if (n >= MAX) break;
        results.append(hit(r.label, s));
        n++;
      }
      if (n >= MAX) {
        await it.return?.();
        break;
      }
    }
    status.textContent = n === 0 ? t('reader.search.none', { query }) : n >= MAX ? t('reader.search.first', { max: MAX, query }) : t('reader.search.found', { n, query });
    menu.dataset.searched = String(mine);
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void find(input.value);
  });
}
