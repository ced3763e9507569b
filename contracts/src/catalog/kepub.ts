// A KEPUB's span map, as the catalog makes it with the conversion and the gateway's Kobo routes read
// it: per spine document, where each koboSpan starts in the body's text.
export interface KepubDoc {
  /** the href as the package writes it (the locator index's `anchor_href`) */
  href: string;
  /** the entry's path in the archive (what a Kobo sends as a Location's `Source`) */
  path: string;
  /** body text length in UTF-16 units */
  n: number;
  /** flat: [span id, offset, span id, offset, …], offsets ascending */
  spans: (string | number)[];
}

export interface SpanMap {
  v: number;
  docs: KepubDoc[];
}
