// The Kobo store's JSON, as a Kobo reads it: entitlements with their book metadata, reading states,
// tags. Field names and the timestamp form (`%Y-%m-%dT%H:%M:%SZ`) are the store's; docs/decisions.md
// ("Native Kobo sync") says where each value comes from.
import type { Catalog } from '@bindery/contracts';

/** The store's timestamp form: seconds, UTC, a Z. */
export const koboTime = (v: string | Date | null | undefined): string => {
  const d = v ? new Date(v) : new Date(0);
  return (Number.isNaN(d.getTime()) ? new Date(0) : d).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

const DEFAULT_CATEGORY = '00000000-0000-0000-0000-000000000001';

export interface Links {
  /** absolute base of this Kobo's store address (`https://host/kobo/<token>`) */
  base: string;
}

export function bookMetadata(item: Catalog.MediaItem, epub: Catalog.MediaFormat, size: number | null, links: Links) {
  const series = item.series ? { Series: { Name: item.series, Number: item.series_index ?? 1, NumberFloat: item.series_index ?? 1, Id: `${item.id}-series` } } : {};
  return {
    Categories: [DEFAULT_CATEGORY],
    ContributorRoles: item.authors.map((a) => ({ Name: a })),
    Contributors: item.authors,
    CoverImageId: coverId(item),
    CrossRevisionId: item.id,
    CurrentDisplayPrice: { CurrencyCode: 'USD', TotalAmount: 0 },
    CurrentLoveDisplayPrice: { TotalAmount: 0 },
    Description: item.description ?? '',
    DownloadUrls: [{ Format: 'KEPUB', Size: size ?? epub.size, Url: `${links.base}/v1/books/${item.id}/file/kepub`, Platform: 'Generic' }],
    EntitlementId: item.id,
    ExternalIds: [],
    Genre: DEFAULT_CATEGORY,
    IsEligibleForKoboLove: false,
    IsInternetArchive: false,
    IsPreOrder: false,
    IsSocialEnabled: true,
    Language: item.language ?? 'en',
    PhoneticPronunciations: {},
    PublicationDate: item.year ? `${item.year}-01-01T00:00:00Z` : koboTime(item.created_at),
    Publisher: { Imprint: '', Name: item.publisher ?? '' },
    RevisionId: item.id,
    Title: item.title,
    WorkId: item.id,
    ...(item.isbn ? { Isbn: item.isbn } : {}),
    ...series,
  };
}

/** The cover's image id changes with the item, so a Kobo fetches a new cover after a change. */
export const coverId = (item: Pick<Catalog.MediaItem, 'id' | 'updated_at'>) => `${item.id}.${new Date(item.updated_at).getTime().toString(36)}`;

export function bookEntitlement(id: string, created: string, modified: string, removed: boolean) {
  return {
    Accessibility: 'Full',
    ActivePeriod: { From: koboTime(modified) },
    Created: koboTime(created),
    CrossRevisionId: id,
    Id: id,
    IsHiddenFromArchive: false,
    IsLocked: false,
    IsRemoved: removed,
    LastModified: koboTime(modified),
    OriginCategory: 'Imported',
    RevisionId: id,
    Status: 'Active',
  };
}

export interface StateFacts {
  percentage: number | null;
  updated_at: string | null;
  location: { Source: string; Value: string; Type: 'KoboSpan' } | null;
}

export function readingState(id: string, created: string, s: StateFacts) {
  const at = koboTime(s.updated_at ?? created);
  const pct = s.percentage ?? 0;
  const status = s.percentage === null || pct <= 0 ? 'ReadyToRead' : pct >= 1 ? 'Finished' : 'Reading';
  return {
    EntitlementId: id,
    Created: koboTime(created),
    LastModified: at,
    PriorityTimestamp: at,
    StatusInfo: { LastModified: at, Status: status, TimesStartedReading: status === 'ReadyToRead' ? 0 : 1, ...(status === 'ReadyToRead' ? {} : { LastTimeStartedReading: at }) },
    Statistics: { LastModified: at },
    CurrentBookmark: {
      LastModified: at,
      ...(s.percentage === null ? {} : { ProgressPercent: Math.round(pct * 10000) / 100, ContentSourceProgressPercent: Math.round(pct * 10000) / 100 }),
      ...(s.location ? { Location: s.location } : {}),
    },
  };
}

export function tag(id: string, name: string, created: string, modified: string, items: string[]) {
  return {
    Tag: {
      Created: koboTime(created),
      Id: id,
      Items: items.map((i) => ({ RevisionId: i, Type: 'ProductRevisionTagItem' })),
      LastModified: koboTime(modified),
      Name: name,
      Type: 'UserTag',
    },
  };
}
