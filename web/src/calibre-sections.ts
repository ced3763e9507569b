// The admin's library page: each library's calibre migration report (as its last scan recorded
// it) and the people whose reading state calibre's ratings and read marks may become (issue 44).
import type { Catalog } from '@bindery/contracts';
import type { Api } from './api';
import type { CalibreSection, UserChoice } from './pages/calibre';

export async function calibreSections(api: Api, libraries: { id: string; name: string }[], me: string): Promise<{ sections: CalibreSection[]; users: UserChoice[]; me: string }> {
  const reports = await Promise.all(
    libraries.map((l) => api<{ report: Catalog.CalibreReport | null; recorded_at: string | null }>('GET', `/api/libraries/${encodeURIComponent(l.id)}/calibre-report`)),
  );
  const sections: CalibreSection[] = [];
  libraries.forEach((l, i) => {
    const r = reports[i]!;
    if (r.status === 200 && r.body.report && r.body.report.folders.length > 0)
      sections.push({ library: { id: l.id, name: l.name }, report: r.body.report, recorded_at: r.body.recorded_at });
  });
  if (sections.length === 0) return { sections, users: [], me };
  const users = await api<UserChoice[]>('GET', '/api/auth/users');
  return { sections, users: users.status === 200 ? users.body.map((u) => ({ id: u.id, username: u.username })) : [], me };
}
