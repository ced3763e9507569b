// No Kobo token, reader key or device credential in a log line, whoever wrote it: the scrubber,
// and a real logger built with it as the processes build theirs.
import { describe, expect, it } from 'vitest';
import { createLogger } from '@bindery/platform';
import { scrubSecrets } from '../src/http/log-secrets';

const KOBO = `bkt_${'a1B2_-'.repeat(7)}x`;
const DEVICE = `bdt_${'Z9y8'.repeat(10)}`;
const KEY = 'hN3p-Q_x'.repeat(5);

describe('scrubSecrets', () => {
  it('replaces the segment after /kobo/ and /opds/key/, and prefixed credentials anywhere', () => {
    expect(scrubSecrets(`{"url":"/kobo/${KOBO}/v1/library/sync?x=1"}`)).toBe('{"url":"/kobo/[redacted]/v1/library/sync?x=1"}');
    expect(scrubSecrets(`{"url":"/opds/key/${KEY}/recent"}`)).toBe('{"url":"/opds/key/[redacted]/recent"}');
    expect(scrubSecrets(`{"msg":"Reply was already sent, did you forget to \\"return reply\\" in the \\"/kobo/${KOBO}\\" (GET) route?"}`)).toBe(
      '{"msg":"Reply was already sent, did you forget to \\"return reply\\" in the \\"/kobo/[redacted]\\" (GET) route?"}',
    );
    expect(scrubSecrets(`authorization: Bearer ${KOBO}; Device ${DEVICE}`)).toBe('authorization: Bearer bkt_[redacted]; Device bdt_[redacted]');
    expect(scrubSecrets(`http://books.example.org/kobo/not-even-a-token`)).toBe('http://books.example.org/kobo/[redacted]');
  });

  it('leaves source files of a kobo/ folder in a stack alone, and lines without secrets as they are', () => {
    const stack = 'TypeError: x\\n    at verify (/srv/services/gateway/src/kobo/auth.ts:45:12)\\n    at file:///srv/dist/kobo/sync.mjs:3:1';
    expect(scrubSecrets(stack)).toBe(stack);
    const plain = '{"level":30,"msg":"scanner: this replica runs the scans","path":"/opds/recent"}';
    expect(scrubSecrets(plain)).toBe(plain);
  });
});

describe('a logger with scrubSecrets', () => {
  it('writes no secret: not in a url field, a message, an error message or its stack, nor from a child', () => {
    const out: string[] = [];
    const log = createLogger('test', 'info', { scrub: scrubSecrets, destination: { write: (s: string) => void out.push(s) } });
    const child = log.child({ reqId: 'req-1' });
    child.error({ err: new Error(`GET /kobo/${KOBO}/v1/initialization failed`), url: `/kobo/${KOBO}/v1/initialization` }, 'request failed');
    log.warn(`Reply was already sent, did you forget to "return reply" in the "/opds/key/${KEY}/recent" (GET) route?`);
    child.info({ authorization: `Device ${DEVICE}` }, 'seen');
    expect(out).toHaveLength(3);
    const all = out.join('');
    for (const s of [KOBO, KEY, DEVICE]) expect(all).not.toContain(s);
    const first = JSON.parse(out[0]!);
    expect(first.url).toBe('/kobo/[redacted]/v1/initialization');
    expect(first.err.message).toBe('GET /kobo/[redacted]/v1/initialization failed');
    expect(first.err.stack).toMatch(/^Error: GET \/kobo\/\[redacted\]\/v1\/initialization failed\n/);
    expect(JSON.parse(out[1]!).msg).toBe('Reply was already sent, did you forget to "return reply" in the "/opds/key/[redacted]/recent" (GET) route?');
    expect(JSON.parse(out[2]!).authorization).toBe('Device bdt_[redacted]');
  });
});
