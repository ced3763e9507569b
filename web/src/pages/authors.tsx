// An author: the books of theirs the caller may see, by title, with the series they belong to.
import { useI18n } from '../i18n';
import type { Item } from './books';
import { countOf } from './browse';
import { LibraryCard } from './library';

export function AuthorPage({ name, items, total }: { name: string; items: Item[]; total: number }) {
  const i18n = useI18n();
  const { t } = i18n;
  const series = [...new Set(items.map((i) => i.series).filter((s): s is string => !!s))].sort((a, b) => a.localeCompare(b));
  return (
    <>
      <p class="muted">{t('library.author')}</p>
      <h1 id="author-name">{name}</h1>
      <p id="author-summary">
        {total > items.length
          ? t('authors.summaryFirst', { books: countOf(i18n, total, 'count.books'), shown: items.length })
          : t('library.total', { total: countOf(i18n, total, 'count.books') })}{' '}
        <a href="/authors">{t('authors.all')}</a>
      </p>
      {series.length > 0 && (
        <nav aria-label={t('authors.seriesBy')}>
          <ul class="plain inline-list" id="author-series">
            {series.map((s) => (
              <li key={s}>
                <a href={`/series/${encodeURIComponent(s)}`}>{s}</a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      {items.length === 0 ? (
        <p id="no-results">{t('authors.noBooks')}</p>
      ) : (
        <ul id="grid" class="grid" aria-label={t('browse.books')}>
          {items.map((i) => (
            <LibraryCard key={i.id} item={i} />
          ))}
        </ul>
      )}
    </>
  );
}
