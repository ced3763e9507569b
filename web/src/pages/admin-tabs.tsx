// The library administration pages' own links (libraries, scanner, duplicates): the main navigation
// names only the first.
import { type MessageKey, useI18n } from '../i18n';

const TABS: { href: string; label: MessageKey }[] = [
  { href: '/admin/libraries', label: 'adminTabs.libraries' },
  { href: '/admin/scanner', label: 'adminTabs.scanner' },
  { href: '/admin/conflicts', label: 'adminTabs.duplicates' },
  { href: '/admin/statistics', label: 'adminTabs.statistics' },
];

export function AdminTabs({ current }: { current: string }) {
  const { t } = useI18n();
  return (
    <nav aria-label={t('adminTabs.label')} class="subnav">
      <ul class="subnav-list">
        {TABS.map((tab) => (
          <li key={tab.href}>
            <a href={tab.href} aria-current={current === tab.href ? 'page' : undefined} class={current === tab.href ? 'subnav-here' : undefined}>
              {t(tab.label)}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
