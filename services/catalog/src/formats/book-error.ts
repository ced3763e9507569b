// The one failure extract() throws: the file is not a book we can read. Its message is short and
// meant for people (shown in the library's problem list), e.g. "not a valid EPUB: missing META-INF/container.xml".

export class BookError extends Error {
  override name = 'BookError';
}

/** An archive that would have us inflate more than our bounds (a zip bomb, a lying header):
 * never tolerated like a merely broken page, so the file is listed as an issue. */
export class ArchiveLimitError extends BookError {
  override name = 'ArchiveLimitError';
}

const FS_MESSAGES: Record<string, string> = {
  ENOENT: 'file not found',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  EIO: 'read error',
  EMFILE: 'too many open files',
};

/** Turns whatever a parser or the file system threw into a BookError, keeping the original as `cause`. */
export function toBookError(e: unknown, label: string): BookError {
  if (e instanceof BookError) return e;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && FS_MESSAGES[code]) return new BookError(`cannot read ${label}: ${FS_MESSAGES[code]}`, { cause: e });
  const detail = e instanceof Error ? e.message : String(e);
  return new BookError(`not a valid ${label}: ${shorten(detail)}`, { cause: e });
}

function shorten(s: string): string {
  const line = s.split('\n')[0]?.trim() || 'unreadable';
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}
