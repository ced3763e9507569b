// The Range header, single byte ranges only: a multipart/byteranges reply is rarely asked for by
// readers and costs a second streaming path, so several ranges get the whole file (RFC 9110 lets
// a server ignore Range).

/** A byte range to send, 'unsatisfiable' for a 416, or null to send the whole file. */
export type RangeRequest = { start: number; end: number } | 'unsatisfiable' | null;

export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return null;
  const m = /^\s*bytes\s*=(.*)$/i.exec(header);
  if (!m) return null; // another unit, or not a range at all: ignored
  const specs = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (specs.length !== 1) return null;
  const spec = /^(\d*)-(\d*)$/.exec(specs[0]!);
  if (!spec) return null;
  const first = spec[1] ?? '';
  const last = spec[2] ?? '';
  if (first === '') {
    if (last === '') return null;
    // bytes=-n: the last n bytes
    const n = Number(last);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return null; // an invalid range-spec makes the header ignorable
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
