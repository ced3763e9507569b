// Search in the book with foliate's view.search (a generator over the sections): the results are a
// list of links with an excerpt each (the match marked), built as text; a link goes to its place.
// Enter searches; the arrow keys move between the field and the results.
import type { SearchExcerpt, View } from 'foliate-js/view.js';
import { byId } from './dom';
import { t } from './messages';

const MAX = 200;

export function search({ view, go }: { view: View; go: (target: string) => Promise<unknown> }): void {
  const menu = byId('search-menu', HTMLDetailsElement);
  const form = byId('search-form', HTMLFormElement);
  const input = byId('search-q', HTMLInputElement);
  const status = byId('search-status');
  const results = byId('search-results');
  let run = 0;

  const hit = (label: string | undefined, { cfi, excerpt }: { cfi: string; excerpt: SearchExcerpt }) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = '#';
    a.dataset.cfi = cfi;
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
      menu.open = false;
      void go(cfi);
    });
    li.append(a);
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
}
