// A book is hostile content. foliate-js shows each section of a book in a frame from a blob: URL
// of this origin, and those frames may run script (WebKit fires no events in a frame without
// `allow-scripts`), so the page's policy is the first wall: it runs only the script this response
// names by nonce. This is the second: every section's document is cleaned before foliate shows it,
// whatever the format (EPUB, MOBI/AZW3, FB2), so that nothing in a chapter can act, even if a
// policy were ever loosened: no scripts, frames, objects or embeds, no event handlers, no htmx
// attributes, no `javascript:`/`vbscript:`/`data:text/html` addresses, no forms, no `<base>`, no meta
// refresh, no SVG animation that rewrites a link, no XSLT. Text, pictures and styles stay.
import type { Book } from 'foliate-js/view.js';

const DROP = new Set(['script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'base', 'portal', 'set', 'animate', 'noscript']);
/** attributes that act (send a form, a ping, a frame's own document) whatever their value */
const ACTING = new Set(['action', 'formaction', 'form', 'ping', 'srcdoc', 'xml:base']);
/** an address that runs code, or a document of its own, once followed */
const ACTIVE_URL = /^(?:javascript|vbscript|livescript):|^data:(?:text\/html|application\/xhtml|text\/xml|application\/xml)/i;
/** browsers skip these when they read a URL's scheme (`java\tscript:`, a leading space) */
const IGNORED = /[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]+/g;

const isInstruction = (node: Node): node is ProcessingInstruction => node.nodeType === 7;

/** Removes what could act from a parsed document, in place. */
export function cleanDocument(doc: Document): Document {
  for (const node of [...doc.childNodes]) {
    // an XSLT style sheet would rewrite the document; only CSS ones stay
    if (isInstruction(node) && node.target === 'xml-stylesheet' && !/type\s*=\s*["']text\/css["']/i.test(node.data)) node.remove();
  }
  for (const el of [...doc.querySelectorAll('*')]) {
    const name = el.localName.toLowerCase();
    if (DROP.has(name)) {
      el.remove();
      continue;
    }
    if (name === 'form') {
      el.replaceWith(...el.childNodes);
    } else if (name === 'meta' && el.hasAttribute('http-equiv')) {
      el.remove();
      continue;
    } else if (name === 'link' && !/(^|\s)stylesheet(\s|$)/i.test(el.getAttribute('rel') ?? '')) {
      el.remove();
      continue;
    }
    for (const a of [...el.attributes]) {
      const n = a.name.toLowerCase();
      const local = a.localName.toLowerCase();
      if (local.startsWith('on') || /^(data-)?hx-/.test(n) || ACTING.has(n) || ACTIVE_URL.test(a.value.replace(IGNORED, ''))) el.removeAttributeNode(a);
    }
  }
  return doc;
}

const XML_TYPES = ['application/xhtml+xml', 'image/svg+xml', 'application/xml', 'text/xml'] as const;
type XmlType = (typeof XML_TYPES)[number];
/** The XML type a parser reads `type` as, or null when it is not one. */
const xmlType = (type: string): XmlType | null => XML_TYPES.find((t) => t === type) ?? null;

/** A section's markup cleaned: `{ text, type }`, XML kept as XML, anything unparsable as XML read as HTML. */
export function cleanMarkup(text: string, type: string): { text: string; type: string } {
  const parser = new DOMParser();
  const xml = xmlType(type);
  if (xml) {
    const doc = parser.parseFromString(text, xml);
    if (!doc.querySelector('parsererror') && doc.documentElement?.namespaceURI) return { text: new XMLSerializer().serializeToString(cleanDocument(doc)), type };
  }
  const doc = cleanDocument(parser.parseFromString(text, 'text/html'));
  return { text: `<!DOCTYPE html>\n${doc.documentElement.outerHTML}`, type: 'text/html' };
}

/**
 * Wraps each section's `load` (the blob: URL foliate shows in its frame) so that what is shown is
 * the section cleaned; the cleaned copy is made once per URL foliate hands out and released with it.
 */
export function cleanSections(book: Book): Book {
  for (const section of book.sections ?? []) {
    const load = section.load?.bind(section);
    if (!load) continue;
    const unload = section.unload?.bind(section);
    let from: string | null = null;
    let made: string | null = null;
    section.load = async () => {
      const url = await load();
      if (typeof url !== 'string' || url === '') return url;
      if (url === from && made) return made;
      const res = await fetch(url);
      const type = ((res.headers.get('content-type') || 'application/xhtml+xml').split(';')[0] ?? '').trim().toLowerCase();
      const clean = cleanMarkup(await res.text(), type);
      if (made) URL.revokeObjectURL(made);
      made = URL.createObjectURL(new Blob([clean.text], { type: clean.type }));
      from = url;
      return made;
    };
    section.unload = () => {
      if (made) URL.revokeObjectURL(made);
      made = null;
      from = null;
      return unload?.();
    };
  }
  return book;
}
