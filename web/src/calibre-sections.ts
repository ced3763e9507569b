import type { Api } from './api';
import type { CalibreSection, UserChoice } from './pages/calibre';

export async function calibreSections(api: Api, libraries: { id: string; name: string }[], me: string): Promise<{ sections: CalibreSection[]; users: UserChoice[]; me: string }> {
  const reports = await Promise.all(libraries.map((l) => api.get('/api/libraries/:id/calibre-report', { params: { id: l.id } })));
  const sections: CalibreSection[] = [];
  libraries.forEach((l, i) => {
    const r = reports[i]!;
    if (r.status === 200 && r.body.report && r.body.report.folders.length > 0)
      sections.push({ library: { id: l.id, name: l.name }, report: r.body.report, recorded_at: r.body.recorded_at });
  });
  if (sections.length === 0) return { sections, users: [], me };
  const users = await api.get('/api/auth/users');
  return { sections, users: users.status === 200 ? users.body.map((u) => ({ id: u.id, username: u.username })) : [], me };
}
