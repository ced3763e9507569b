// The rules of a send to an e-reader (issue 47): what the gateway asks is checked again, and what a
// try comes to (sent; tried again after 1, 5, 30 and 120 minutes; failed for good).
import { describe, expect, it } from 'vitest';
import { parseSendInput, SEND_RETRY_DELAYS_MS, sendOutcome } from '../src/domain/mail';

const good = { item_id: '0F8FAD5B-D9CB-469F-A165-70867728950E', title: 'A Book', format: 'epub', file_name: 'a book.epub', size: 1234 };

describe('a send to an e-reader', () => {
  it('takes a checked request, the id in lower case', () => {
    expect(parseSendInput(good)).toEqual({ ok: true, value: { ...good, item_id: good.item_id.toLowerCase() } });
  });

  it.each([
    [{ item_id: 'nope' }, 'item_id must be a media item id'],
    [{ title: 'x'.repeat(1001) }, 'title must be text of at most 1000 characters'],
    [{ format: 'EPUB!' }, 'format must be a book format'],
    [{ file_name: '../etc/passwd' }, 'file_name must be a file name'],
    [{ file_name: 'a\u0000b.epub' }, 'file_name must be a file name'],
    [{ size: -1 }, 'size must be a whole number of bytes'],
    [{ size: 1.5 }, 'size must be a whole number of bytes'],
  ])('refuses %o', (bad, message) => {
    const r = parseSendInput({ ...good, ...bad });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toEqual({ code: 'validation', message });
  });

  it('is tried again after each delay, then fails for good; a final refusal fails at once', () => {
    const now = new Date('2026-12-02T10:00:00.000Z');
    expect(sendOutcome(1, true, false, now)).toEqual({ outcome: 'sent', next_attempt_at: null });
    const waits = SEND_RETRY_DELAYS_MS.map((_, i) => sendOutcome(i + 1, false, false, now).next_attempt_at);
    expect(waits).toEqual(['2026-12-02T10:01:00.000Z', '2026-12-02T10:05:00.000Z', '2026-12-02T10:30:00.000Z', '2026-12-02T12:00:00.000Z']);
    expect(sendOutcome(SEND_RETRY_DELAYS_MS.length + 1, false, false, now)).toEqual({ outcome: 'failed', next_attempt_at: null });
    expect(sendOutcome(1, false, true, now)).toEqual({ outcome: 'failed', next_attempt_at: null });
  });
});
