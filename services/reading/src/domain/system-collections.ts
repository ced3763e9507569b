// The five collections every new account gets (spec: "System collection"); their rules are in
// rules/ (compiled by the gateway's read model too).
import type { SystemQuery } from '../rules';

export type { SystemQuery };

export interface SystemCollection {
  name: string;
  query_type: SystemQuery;
  priority: number;
  color: string;
  icon: string;
}

export const SYSTEM_COLLECTIONS: readonly SystemCollection[] = [
  { name: 'Continue Reading', query_type: 'continue-reading', priority: 1, color: '#7aa2f7', icon: '📖' },
  { name: 'Recently Added', query_type: 'recently-added', priority: 2, color: '#9ece6a', icon: '🆕' },
  { name: 'Recently Read', query_type: 'recently-read', priority: 3, color: '#e0af68', icon: '✅' },
  { name: 'Not Started', query_type: 'not-started', priority: 4, color: '#f7768e', icon: '📕' },
  { name: 'Continue Series', query_type: 'continue-series', priority: 5, color: '#bb9af7', icon: '📚' },
];

export const systemCollection = (q: unknown): SystemCollection | undefined => SYSTEM_COLLECTIONS.find((c) => c.query_type === q);
