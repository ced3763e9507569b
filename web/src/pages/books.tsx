// A book as a card (cover or a lettered placeholder, title, authors, optional progress): the
// dashboard's rows and the library's grid share it.
import type { Catalog } from '@bindery/contracts';
import { useI18n } from '../i18n';

export type Item = Catalog.MediaItem;

export function Cover({ item, big = false }: { item: Item; big?: boolean }) {
  if (item.cover_url === null) {
    return (
      <div class={big ? 'cover cover-big placeholder' : 'cover placeholder'} aria-hidden="true">
        {(item.title.trim()[0] ?? '?').toUpperCase()}
      </div>
    );
  }
  return <img class={big ? 'cover cover-big' : 'cover'} src={`/api/media-items/${item.id}/${big ? 'cover' : 'thumbnail'}`} alt="" loading="lazy" decoding="async" />;
}

export const percent = (p: number) => `${Math.round(p * 100)}%`;

export function BookCard({ item, progress }: { item: Item; progress?: number | null }) {
  const { t } = useI18n();
  return (
    <li class="book">
      <a href={`/books/${item.id}`} class="book-link">
        <Cover item={item} />
        <span class="book-title">{item.title}</span>
      </a>
      {item.authors.length > 0 && <span class="book-authors">{item.authors.join(', ')}</span>}
      {typeof progress === 'number' && (
        <progress max={100} value={Math.round(progress * 100)} aria-label={t('book.readShare', { title: item.title, share: percent(progress) })}>
          {percent(progress)}
        </progress>
      )}
    </li>
  );
}
