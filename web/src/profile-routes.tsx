// The profile page, and its sessions: the caller's own, as the API lists them, and signing them out.
import { action, Said } from './actions';
import type { Answer } from './api';
import type { Web } from './context';
import { sendHtml } from './http';
import { i18nFor } from './i18n/request';
import { Profile, type ProfileData } from './pages/profile';
import { SessionList } from './pages/sessions';

const idOf = (req: { params: unknown }) => (req.params as { id: string }).id;

export function profileRoutes({ page, render }: Web): void {
  page('/profile', {}, async ({ req, reply, viewer }) => render(reply, i18nFor(req).t('profile.title'), viewer, '/profile', <Profile me={viewer as ProfileData} />));
}

/** After a sign-out, the list of sessions is fetched again. */
const RefetchSessions = () => <div hx-get="/profile/sessions" hx-trigger="load" hx-target="#sessions" hx-swap="outerHTML" />;
function SessionsChanged({ a, fallback }: { a: Answer<unknown>; fallback: string }) {
  return (
    <>
      <Said a={a} fallback={fallback} />
      <RefetchSessions />
    </>
  );
}

export function sessionRoutes({ app, page }: Web): void {
  page('/profile/sessions', {}, async ({ reply, api }) => {
    const r = await api.get('/api/auth/sessions');
    return sendHtml(reply, r.status === 200 ? <SessionList sessions={r.body.data} /> : <SessionList sessions={[]} failed={r.status} />, 200, true);
  });
  action(app, '/profile/sessions/:id/sign-out', { done: 'session signed out', show: (a) => <SessionsChanged a={a} fallback="session signed out" /> }, (api, _f, req) =>
    api.delete('/api/auth/sessions/:id', { params: { id: idOf(req) } }),
  );
  action(app, '/profile/sessions/sign-out-others', { done: 'signed out everywhere else', show: (a) => <SessionsChanged a={a} fallback="signed out everywhere else" /> }, (api) =>
    api.delete('/api/auth/sessions'),
  );
}
