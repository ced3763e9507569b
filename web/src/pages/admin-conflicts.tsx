// Admin: duplicate content. Each pending group (books whose files share a SHA-256) lists its
// members with their library, file paths and how much reading data hangs on each (the reading
// service's counts); "Keep this one" keeps that book and merges the others into it, "Keep all"
// dismisses the group. The catalog decides and words the outcome.
import type { Reading } from '@bindery/contracts';
import type { Item } from './books';
import { Outcome } from '../layout';
import { AdminTabs } from './admin-tabs';

/** how much reading data hangs on an item (the reading service's count) */
export type Usage = Reading.Usage;
export interface ConflictGroup {
  id: string;
  sha256: string;
  created_at: string;
  items: (Item & { usage: Usage })[];
}

const USAGE: [keyof Usage, string, string][] = [
  ['progress', 'reading position', 'reading positions'],
  ['highlights', 'highlight', 'highlights'],
  ['bookmarks', 'bookmark', 'bookmarks'],
  ['notes', 'note', 'notes'],
  ['collections', 'collection', 'collections'],
];

/** "2 reading positions, 1 highlight", or "No reading data". */
export function usageText(u: Usage): string {
  const parts = USAGE.filter(([k]) => u[k] > 0).map(([k, one, many]) => `${u[k]} ${u[k] === 1 ? one : many}`);
  return parts.length === 0 ? 'No reading data' : parts.join(', ');
}

export function AdminConflicts({ groups, libraries }: { groups: ConflictGroup[]; libraries: Map<string, string> }) {
  return (
    <>
      <h1>Duplicate books</h1>
      <AdminTabs current="/admin/conflicts" />
      <p class="muted">
        These books have files with exactly the same content. Keep one and the others are removed from the catalog, their reading positions, highlights, notes and collections moved
        to the one kept; or keep them all. Files on disk are never deleted.
      </p>
      {groups.length === 0 ? (
        <p id="no-conflicts">No duplicate waits for a decision.</p>
      ) : (
        <ul class="plain conflicts" id="conflicts">
          {groups.map((g, n) => (
            <li key={g.id} id={`conflict-${g.id}`} class="card conflict" data-conflict={g.id}>
              <h2 id={`conflict-title-${g.id}`}>{`Duplicate ${n + 1}: ${g.items.length} books with the same content`}</h2>
              <p class="muted">
                SHA-256 <code>{g.sha256}</code>
              </p>
              <div id={`conflict-members-${g.id}`}>
                <ul class="plain">
                  {g.items.map((i) => (
                    <li key={i.id} class="conflict-member" data-item={i.id}>
                      <p class="member-title">
                        <a href={`/books/${i.id}`}>{i.title}</a>
                        {i.authors.length > 0 && <span class="muted">{` by ${i.authors.join(', ')}`}</span>}
                      </p>
                      <dl class="meta">
                        <dt>Library</dt>
                        <dd class="member-library">{libraries.get(i.library_id) ?? i.library_id}</dd>
                        <dt>Files</dt>
                        <dd class="member-paths">{(i.formats.length > 0 ? i.formats.map((f) => f.file_path) : [i.file_path ?? '']).join(', ')}</dd>
                        <dt>Reading data</dt>
                        <dd class="member-usage">{usageText(i.usage)}</dd>
                      </dl>
                      <form hx-post={`/admin/conflicts/${g.id}/resolve`} hx-target={`#conflict-outcome-${g.id}`}>
                        <input type="hidden" name="action" value="keep" />
                        <input type="hidden" name="keep_uuid" value={i.id} />
                        <button type="submit" class="primary" aria-label={`Keep this one: ${i.title} (${(i.formats[0]?.file_path ?? i.file_path) || i.id})`}>
                          Keep this one
                        </button>
                      </form>
                    </li>
                  ))}
                </ul>
                <form hx-post={`/admin/conflicts/${g.id}/resolve`} hx-target={`#conflict-outcome-${g.id}`}>
                  <input type="hidden" name="action" value="keep_all" />
                  <button type="submit" id={`keep-all-${g.id}`} aria-describedby={`conflict-title-${g.id}`}>
                    Keep all
                  </button>
                </form>
              </div>
              <Outcome id={`conflict-outcome-${g.id}`} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The book page's notice: this book is one of a pending duplicate group (admins get the way to decide). */
export function ConflictNotice({ group }: { group: ConflictGroup | null }) {
  if (!group) return <div id="conflict-notice" />;
  const others = group.items.length - 1;
  return (
    <div id="conflict-notice" class="alert alert-warning" role="note">
      {`This book has the same file content as ${others === 1 ? 'another book' : `${others} other books`}. `}
      <a href={`/admin/conflicts#conflict-${group.id}`} id="conflict-link">
        Decide which to keep
      </a>
    </div>
  );
}
