/** Where a finished sign-in goes: a path of this site only (never `//host` or `/\host`), else `fallback`. */
export function localReturn(v: string, fallback: string): string {
  return v.length <= 2048 && /^\/(?![/\\])[\x21-\x7e]*$/.test(v) ? v : fallback;
}
