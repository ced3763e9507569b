// The page shell: head (hashed assets, htmx configured for our CSP), a skip link, the top bar with
// navigation and sign-out, and the main landmark. Every page renders inside it.
import type { FastifyReply } from 'fastify';
import type { ComponentChildren, VNode } from 'preact';
import type { Assets } from './assets';
import { type MessageKey, useI18n } from './i18n';
import { schemeOf } from './theme';

export interface Viewer {
  id: string;
  username: string;
  role: 'admin' | 'user';
  /** present (true) when the admin allowed this person to edit books' details and covers (issue 43) */
  can_edit_metadata?: boolean;
  theme?: string;
  /** the language the person chose for the pages (absent: their browser's), issue 48 */
  language?: string;
  /** the session's CSRF token, which the page's scripts send with every write (X-CSRF-Token) */
  csrf?: string | null;
}

// No inline indicator styles and no settling of `style` attributes (the CSP has no 'unsafe-inline':
// htmx copying a `style=""` between old and new elements is a violation), no eval, no script tags in swaps.
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  attributesToSettle: ['class', 'width', 'height'],
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
});

const NAV: { href: string; label: MessageKey; admin?: boolean; editor?: boolean }[] = [
  { href: '/dashboard', label: 'nav.home' },
  { href: '/library', label: 'nav.library' },
  { href: '/upload', label: 'nav.upload', editor: true },
  { href: '/collections', label: 'nav.collections' },
  { href: '/devices', label: 'nav.devices' },
  { href: '/statistics', label: 'nav.statistics' },
  { href: '/profile', label: 'nav.profile' },
  { href: '/admin/libraries', label: 'nav.libraries', admin: true },
  { href: '/admin/users', label: 'nav.people', admin: true },
  { href: '/admin/system', label: 'nav.system', admin: true },
];

/** Whether the viewer may edit books' details and covers: an admin, or allowed by one (issue 43). */
export const mayEdit = (v: Viewer | null | undefined): boolean => v?.role === 'admin' || v?.can_edit_metadata === true;

/** How a group of page routes renders a page in the layout (routes.tsx gives it to each group). */
export type Render = (reply: FastifyReply, title: string, viewer: Viewer | null, current: string | undefined, body: VNode, status?: number, live?: Live) => FastifyReply;
/**
 * A signed-in page kept as rendered for its viewer and the exact API answers (`answers`, their texts)
 * it is made from: the same answers to the same viewer render the same HTML, so a repeat skips
 * parsing and rendering; a changed book, position or access changes an answer, and so the key.
 */
export type RenderKept = (
  reply: FastifyReply,
  answers: readonly (string | undefined)[],
  viewer: Viewer,
  current: string | undefined,
  make: () => { title: string; body: VNode },
  live?: Live,
) => FastifyReply;

/** The body of a page that is not there (or not the caller's to see), with a way back. */
export function NotFound({ href = '/dashboard', back }: { href?: string; back?: string }) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('notFound.title')}</h1>
      <p id="failure">
        {t('notFound.text')} <a href={href}>{back ?? t('notFound.back')}</a>
      </p>
    </>
  );
}

/** The body of a page the API could not answer for: its status, and to try again. */
export function Failed({ status }: { status: number }) {
  const { t } = useI18n();
  return (
    <>
      <h1>{t('failed.title')}</h1>
      <p id="failure">{t('failed.text', { status: String(status) })}</p>
    </>
  );
}

/** What the live channel may refresh on this page: the topic, the part to fetch again, the one item it is about. */
export interface Live {
  topic: 'progress' | 'scanner';
  refresh: string;
  item?: string;
}

export function Layout(p: { assets: Assets; title: string; viewer: Viewer | null; current?: string; live?: Live; children: ComponentChildren }) {
  const { t, locale, dir } = useI18n();
  return (
    <html lang={locale} dir={dir} class={`theme-${schemeOf(p.viewer?.theme)}`}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        {p.viewer?.csrf && <meta name="csrf-token" content={p.viewer.csrf} />}
        <title>{`${p.title} · Bindery`}</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={p.assets.css} />
        <link rel="manifest" href="/manifest.webmanifest" />
        <script src={p.assets.htmx} defer />
        <script src={p.assets.js} defer />
        <script src={p.assets.edit} defer />
        <script src={p.assets.offline} defer />
        {mayEdit(p.viewer) && <script src={p.assets.upload} defer />}
      </head>
      <body>
        <a class="skip" href="#main">
          {t('layout.skip')}
        </a>
        <header class="topbar">
          <a class="brand" href={p.viewer ? '/dashboard' : '/login'}>
            Bindery
          </a>
          {p.viewer && (
            <nav aria-label={t('layout.mainNav')}>
              <ul>
                {NAV.filter((n) => (!n.admin || p.viewer?.role === 'admin') && (!n.editor || mayEdit(p.viewer))).map((n) => (
                  <li key={n.href}>
                    <a href={n.href} aria-current={p.current === n.href ? 'page' : undefined}>
                      {t(n.label)}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {p.viewer && (
            <form class="signout" method="post" action="/api/auth/logout" hx-post="/api/auth/logout" hx-swap="none" data-redirect-to="/api/auth/oidc/signed-out">
              <span class="who" id="who">
                {p.viewer.username}
              </span>
              <button type="submit" id="sign-out">
                {t('layout.signOut')}
              </button>
            </form>
          )}
        </header>
        <main id="main" tabindex={-1} data-live={p.live?.topic} data-live-refresh={p.live?.refresh} data-live-item={p.live?.item}>
          {p.children}
        </main>
      </body>
    </html>
  );
}

/**
 * Where a form's outcome (an error or a confirmation) appears; announced to screen readers. Kept as it
 * is when the part around it is swapped again (`hx-preserve`): a live refresh of a list must not wipe
 * the message a person is reading, nor the target of the request still on its way.
 */
export function Outcome({ id }: { id: string }) {
  return <div id={id} class="outcome" aria-live="polite" hx-preserve="true" />;
}
