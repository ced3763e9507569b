// The library administration pages' own links (libraries, scanner, duplicates): the main navigation
// names only the first.

const TABS = [
  { href: '/admin/libraries', label: 'Libraries' },
  { href: '/admin/scanner', label: 'Scanner' },
  { href: '/admin/conflicts', label: 'Duplicates' },
  { href: '/admin/statistics', label: 'Statistics' },
];

export function AdminTabs({ current }: { current: string }) {
  return (
    <nav aria-label="Library administration" class="subnav">
      <ul class="subnav-list">
        {TABS.map((t) => (
          <li key={t.href}>
            <a href={t.href} aria-current={current === t.href ? 'page' : undefined} class={current === t.href ? 'subnav-here' : undefined}>
              {t.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
