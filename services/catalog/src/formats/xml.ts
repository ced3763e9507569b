// A tiny read-only DOM over fast-xml-parser, enough for OPF, ComicInfo, FB2 and cover pages.
// Names are local (prefix dropped) and lower-cased, so lookups forgive the namespace prefixes and
// letter case that real files get wrong. Entities are decoded here, never expanded from a DOCTYPE.
import { XMLParser } from 'fast-xml-parser';
import { decodeEntities } from './text';

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
}
export type XmlNode = XmlElement | string;

const parser = new XMLParser({
  preserveOrder: true,
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  cdataPropName: '#cdata',
  commentPropName: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: false,
  maxNestedTags: 256,
});

/** The document element, or null when there is none. May throw on badly broken input; the
 * parser is lenient, so unclosed tags usually yield a partial tree rather than an error. */
export function parseXml(text: string): XmlElement | null {
  const nodes = convert(parser.parse(text) as unknown);
  return nodes.find((n): n is XmlElement => typeof n !== 'string') ?? null;
}

type Raw = Record<string, unknown>;

function convert(raw: unknown): XmlNode[] {
  if (!Array.isArray(raw)) return [];
  const out: XmlNode[] = [];
  for (const item of raw as Raw[]) {
    for (const [key, value] of Object.entries(item)) {
      if (key === ':@') continue;
      if (key === '#text') out.push(decodeEntities(String(value)));
      else if (key === '#cdata') out.push(rawText(value));
      else out.push({ name: key.toLowerCase(), attrs: attrsOf(item[':@']), children: convert(value) });
    }
  }
  return out;
}

function rawText(value: unknown): string {
  if (!Array.isArray(value)) return '';
  return (value as Raw[]).map((v) => (typeof v['#text'] === 'string' ? v['#text'] : '')).join('');
}

function attrsOf(raw: unknown): Record<string, string> {
  const attrs: Record<string, string> = {};
  if (raw && typeof raw === 'object') {
    for (const [k, v] of Object.entries(raw as Raw)) attrs[k.toLowerCase()] = decodeEntities(String(v));
  }
  return attrs;
}

export function elements(el: XmlElement | null | undefined, name?: string): XmlElement[] {
  if (!el) return [];
  return el.children.filter((c): c is XmlElement => typeof c !== 'string' && (name === undefined || c.name === name));
}

export function child(el: XmlElement | null | undefined, name: string): XmlElement | null {
  return elements(el, name)[0] ?? null;
}

/** Elements named `name` anywhere below `el`, in document order. */
export function descendants(el: XmlElement | null | undefined, name: string, out: XmlElement[] = []): XmlElement[] {
  for (const c of elements(el)) {
    if (c.name === name) out.push(c);
    descendants(c, name, out);
  }
  return out;
}

export function textOf(el: XmlElement | null | undefined): string {
  if (!el) return '';
  return el.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');
}

export function attr(el: XmlElement | null | undefined, name: string): string | null {
  return el?.attrs[name] ?? null;
}

/** Mixed content back to HTML for htmlToText, keeping paragraph breaks. Text is not re-escaped:
 * descriptions are usually HTML escaped inside the XML, which must come out as tags. */
export function markupOf(el: XmlElement | null | undefined): string {
  if (!el) return '';
  return el.children.map((c) => (typeof c === 'string' ? c : `<${c.name}>${markupOf(c)}</${c.name}>`)).join('');
}

/** Bytes to text honouring a BOM or the XML declaration's encoding (FB2 is often windows-1251);
 * unknown labels fall back to UTF-8. */
export function decodeXml(bytes: Uint8Array): string {
  const b0 = bytes[0];
  const b1 = bytes[1];
  if (b0 === 0xef && b1 === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes);
  if ((b0 === 0xff && b1 === 0xfe) || (b0 === 0x3c && b1 === 0x00)) return new TextDecoder('utf-16le').decode(bytes);
  if ((b0 === 0xfe && b1 === 0xff) || (b0 === 0x00 && b1 === 0x3c)) return new TextDecoder('utf-16be').decode(bytes);
  const head = Buffer.from(bytes.subarray(0, 256)).toString('latin1');
  const label = /^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/u.exec(head)?.[1];
  if (label) {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // An encoding Node does not know: UTF-8 is the best guess.
    }
  }
  return new TextDecoder('utf-8').decode(bytes);
}
