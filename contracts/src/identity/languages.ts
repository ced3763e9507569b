// The language of a request from its Accept-Language header (issue 48): one reading for the pages
// (web/src/i18n) and the OPDS feeds (services/gateway/src/opds/words.ts).
import { LANGUAGES, type Language } from './events';

/** The tags of an Accept-Language header, most wanted first (q=0 and malformed tags left out). */
export function acceptedTags(header: string): string[] {
  const out: { tag: string; q: number; i: number }[] = [];
  header
    .slice(0, 1024)
    .split(',')
    .forEach((part, i) => {
      const [rawTag, ...params] = part.trim().split(';');
      const tag = (rawTag ?? '').trim();
      if (!/^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$|^\*$/.test(tag)) return;
      let q = 1;
      for (const p of params) {
        const m = /^\s*q\s*=\s*([01](\.\d{0,3})?)\s*$/.exec(p);
        if (m) q = Number(m[1]);
      }
      if (q > 0) out.push({ tag, q, i });
    });
  return out.sort((a, b) => b.q - a.q || a.i - b.i).map((x) => x.tag);
}

/** The shipped language a tag asks for: itself, else its language without the region (`de-AT` is `de`); any Chinese but traditional is `zh-Hans`. */
export function shippedLanguage(tag: string): Language | null {
  const lower = tag.toLowerCase();
  for (const l of LANGUAGES) if (l.toLowerCase() === lower) return l;
  const [lang, ...rest] = lower.split('-');
  if (lang === 'zh') {
    // traditional script or its regions: none shipped
    if (rest.includes('hant') || rest.includes('tw') || rest.includes('hk') || rest.includes('mo')) return null;
    return 'zh-Hans';
  }
  return LANGUAGES.find((l) => l === lang) ?? null;
}

/** The first language of an Accept-Language header, by weight, that Bindery ships; null when none. */
export function languageFromHeader(header: string | undefined | null): Language | null {
  for (const tag of acceptedTags(header ?? '')) {
    const found = shippedLanguage(tag);
    if (found) return found;
  }
  return null;
}

/** The language a profile (the JSON GET /api/auth/profile answers) names, when it is a shipped one; else null. */
export function profileLanguage(profileJson: string | null | undefined): Language | null {
  if (!profileJson) return null;
  try {
    const language: unknown = (JSON.parse(profileJson) as { language?: unknown }).language;
    return (LANGUAGES as readonly unknown[]).includes(language) ? (language as Language) : null;
  } catch {
    return null;
  }
}
