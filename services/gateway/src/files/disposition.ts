// Content-Disposition with a file name: an ASCII stand-in for old clients, the exact name in
// RFC 8187 form for everyone else.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function contentDisposition(fileName: string, kind: 'inline' | 'attachment' = 'inline'): string {
  const name = fileName.replace(LONE_SURROGATE, '\uFFFD').normalize('NFC');
  const ascii = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    // quotes and backslashes would end or escape the quoted string; browsers decode % sequences
    .replace(/[^\x20-\x7e]|["\\%]/g, '_');
  // encodeURIComponent leaves ' ( ) * alone, which RFC 8187's attr-char does not allow
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
