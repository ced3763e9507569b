// Record 0 of a Mobipocket book (MOBI and KF8/AZW3 alike): the PalmDOC header, the MOBI header and
// the EXTH metadata block. Pure: bytes in, metadata and the cover's record number out.
import { TextDecoder } from 'node:util';
import { BookError } from './book-error';
import { clean, htmlToText, normalizeIsbn, splitPersonNames, unique, yearOf } from './text';
import { emptyMetadata, type BookMetadata } from './types';

export interface MobiHeader {
  metadata: BookMetadata;
  /** Record index of the cover image, when the book names one. */
  coverRecord: number | null;
}

const NONE = 0xffffffff;
const MAX_EXTH_RECORDS = 10_000;

export function parseRecord0(rec: Buffer, pdbName: string, label: string): MobiHeader {
  const metadata = emptyMetadata();
  metadata.title = clean(pdbName.replace(/_/gu, ' '));
  if (rec.length < 24 || rec.toString('latin1', 16, 20) !== 'MOBI') throw new BookError(`not a valid ${label}: missing MOBI header`);
  const u32 = (at: number): number | null => (at + 4 <= rec.length ? rec.readUInt32BE(at) : null);
  const headerEnd = 16 + (u32(20) ?? 0);
  const field = (at: number): number | null => (at + 4 <= headerEnd ? u32(at) : null);
  const decoder = new TextDecoder(u32(28) === 65001 ? 'utf-8' : 'windows-1252');

  const nameOffset = field(84);
  const nameLength = field(88);
  if (nameOffset !== null && nameLength !== null && nameLength > 0 && nameOffset + nameLength <= rec.length) {
    metadata.title = clean(decoder.decode(rec.subarray(nameOffset, nameOffset + nameLength))) ?? metadata.title;
  }
  const firstImage = field(108);
  const exthFlags = field(128) ?? 0;
  let coverOffset: number | null = null;
  if (exthFlags & 0x40) coverOffset = applyExth(rec, headerEnd, decoder, metadata);
  const coverRecord = firstImage !== null && firstImage !== NONE && coverOffset !== null && coverOffset !== NONE ? firstImage + coverOffset : null;
  return { metadata, coverRecord };
}

/** Fills `m` from the EXTH block at `at`; returns the cover offset (EXTH 201), if any. */
function applyExth(rec: Buffer, at: number, decoder: TextDecoder, m: BookMetadata): number | null {
  if (at + 12 > rec.length || rec.toString('latin1', at, at + 4) !== 'EXTH') return null;
  const count = Math.min(rec.readUInt32BE(at + 8), MAX_EXTH_RECORDS);
  const authors: string[] = [];
  const subjects: string[] = [];
  let cover: number | null = null;
  let pos = at + 12;
  for (let i = 0; i < count && pos + 8 <= rec.length; i++) {
    const type = rec.readUInt32BE(pos);
    const len = rec.readUInt32BE(pos + 4);
    if (len < 8 || pos + len > rec.length) break;
    const data = rec.subarray(pos + 8, pos + len);
    pos += len;
    const text = (): string | null => clean(decoder.decode(data));
    switch (type) {
      case 100:
        authors.push(...splitPersonNames(text() ?? ''));
        break;
      case 101:
        m.publisher = text();
        break;
      case 103:
        m.description = htmlToText(decoder.decode(data));
        break;
      case 104:
        setIsbn(m, text());
        break;
      case 105: {
        const s = text();
        if (s) subjects.push(s);
        break;
      }
      case 106:
        m.year = yearOf(text());
        break;
      case 112:
        source(m, text());
        break;
      case 113:
      case 504: {
        const asin = text();
        if (asin && /^[A-Z0-9]{10}$/u.test(asin)) m.identifiers.asin ??= asin;
        break;
      }
      case 201:
        if (data.length >= 4) cover = data.readUInt32BE(0);
        break;
      case 503:
        m.title = text() ?? m.title;
        break;
      case 524:
        m.language = text();
        break;
      default:
        break;
    }
  }
  m.contributors = unique(authors).map((name) => ({ name, role: 'author' }));
  m.subjects = unique(subjects);
  return cover;
}

function setIsbn(m: BookMetadata, value: string | null): void {
  const isbn = normalizeIsbn(value);
  if (!isbn || m.isbn) return;
  m.isbn = isbn;
  m.identifiers.isbn = isbn;
}

/** EXTH 112 (source): calibre writes "calibre:<uuid>"; some stores write "urn:isbn:…". */
function source(m: BookMetadata, value: string | null): void {
  const match = value ? /^(?:urn:)?([a-z][a-z0-9-]*):(.+)$/iu.exec(value) : null;
  if (!match?.[1] || !match[2]) return;
  const scheme = match[1].toLowerCase();
  if (scheme === 'isbn') setIsbn(m, match[2]);
  else if (scheme === 'calibre' || scheme === 'uuid') m.identifiers[scheme] ??= match[2].trim();
}
