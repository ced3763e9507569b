// Books mailed to e-reader addresses (issue 47). Identity records each send (pending, then sent,
// retried with backoff, or failed); this process mails them: the worker takes the sends that are
// due (a lease, so two gateways never mail one send at once), reads the book's file from its
// library folder, mails it and says what came of it.
import { sendText } from '@bindery/identity/mail-texts';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Catalog, Identity } from '@bindery/contracts';
import { resolveInside, type Logger, type MailAttachment, type Mailer, type MailOutcome } from '@bindery/platform';
import type { CallIdentity } from '../http/rpc';
import type { Reads } from '../read-model/reads';

/** What the e-mail services of the e-readers take (Kindle: EPUB and PDF, no MOBI or AZW3 since 2022). */
const KINDLE_TAKES = ['epub', 'pdf'];
/** The order a book's formats are offered in to any other address (PocketBook, Kobo through a mail service). */
const PREFERRED = ['epub', 'pdf', 'azw3', 'mobi', 'fb2', 'cbz', 'cbr', 'cb7'];

const MIME: Record<string, string> = {
  epub: 'application/epub+zip',
  pdf: 'application/pdf',
  mobi: 'application/x-mobipocket-ebook',
  azw3: 'application/vnd.amazon.ebook',
  fb2: 'application/x-fictionbook+xml',
  cbz: 'application/vnd.comicbook+zip',
  cbr: 'application/vnd.comicbook-rar',
  cb7: 'application/x-cb7',
};

export const isKindle = (address: string): boolean => /@(free\.)?kindle\.com$/i.test(address.trim());

/** What calibre's converter turns into an EPUB for an address that takes no format the book has. */
const CONVERTIBLE = ['azw3', 'mobi'];

/** What is mailed: a file of the book as it is, or one converted to EPUB from it (`convert`). */
export interface SendChoice {
  file: Catalog.MediaFormat;
  convert: boolean;
}

/**
 * The format to mail to `address`: one it takes as it is; else, where calibre's `ebook-convert` is
 * installed (`canConvert`), the book's AZW3 or MOBI made an EPUB; null when neither.
 */
export function bestFormat(formats: readonly Catalog.MediaFormat[], address: string, canConvert = false): SendChoice | null {
  const takes = isKindle(address) ? KINDLE_TAKES : PREFERRED;
  for (const f of takes) {
    const found = formats.find((x) => x.format === f);
    if (found) return { file: found, convert: false };
  }
  if (canConvert)
    for (const f of CONVERTIBLE) {
      const found = formats.find((x) => x.format === f);
      if (found) return { file: found, convert: true };
    }
  return null;
}

const run = promisify(execFile);

/** calibre's converter on this machine, or null (then nothing is converted). */
export async function findConverter(): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    const p = join(dir, 'ebook-convert');
    try {
      if ((await stat(p)).isFile()) return p;
    } catch {
      // not in this folder
    }
  }
  return null;
}

/** How long a conversion may take before the send fails. */
const CONVERT_MS = 180_000;

/** How often the worker looks for sends due again (a new send wakes it at once). */
const SWEEP_MS = 5_000;
/** How long a taken send is this worker's: longer than a send of the largest attachment takes. */
const LEASE_MS = 5 * 60_000;

export class SendWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly call: CallIdentity,
    private readonly mailer: Mailer,
    private readonly reads: Reads,
    private readonly log: Logger,
    /** calibre's `ebook-convert`, when installed: an AZW3 or MOBI is made an EPUB for an address that takes neither */
    readonly converter: string | null = null,
  ) {}

  start(): void {
    this.stopped = false;
    this.timer = setInterval(() => this.kick(), SWEEP_MS);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Looks for due sends now (again after the current pass, if one is under way). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .catch((e) => this.log.warn({ err: (e as Error).message }, 'sending books to e-readers failed'))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async pass(): Promise<void> {
    for (;;) {
      const r = await this.call('sends-claim', { limit: 5, lease_ms: LEASE_MS });
      if (!r.ok) return;
      const due = r.value.data;
      for (const s of due) await this.deliver(s);
      if (due.length < 5 || this.stopped) return;
    }
  }

  private async deliver(s: Identity.BookSend): Promise<void> {
    const outcome = await this.mailed(s);
    const r = await this.call('send-result', {
      send_id: s.id,
      ok: outcome.ok,
      permanent: outcome.ok ? false : outcome.permanent,
      detail: (outcome.ok ? outcome.response : outcome.error).slice(0, 1000),
    });
    if (!r.ok) this.log.warn({ send: s.id, err: r.error.message }, 'the outcome of a send was not recorded');
  }

  /** The send mailed: its file as it is, or converted in a folder of its own that is removed after. */
  private async mailed(s: Identity.BookSend): Promise<MailOutcome> {
    const file = await this.fileOf(s, s.convert_from ?? s.format);
    if (file === null) return { ok: false, permanent: true, error: 'the book’s file is no longer in the library' };
    const mail = (a: MailAttachment) => this.mailer.send({ to: s.address, ...sendText(s.language, s.title || s.file_name), attachments: [a] });
    const contentType = MIME[s.format] ?? 'application/octet-stream';
    if (!s.convert_from) return mail({ filename: s.file_name, contentType, path: file });
    if (!this.converter) return { ok: false, permanent: true, error: 'this server can no longer convert books (calibre’s ebook-convert is gone)' };
    const dir = await mkdtemp(join(tmpdir(), 'bindery-send-'));
    try {
      const out = join(dir, `book.${s.format}`);
      try {
        await run(this.converter, [file, out], { timeout: CONVERT_MS, maxBuffer: 16 << 20, env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } });
      } catch (e) {
        const said = ((e as { stderr?: string }).stderr || (e as Error).message).trim().split('\n').pop() ?? '';
        return { ok: false, permanent: true, error: `the book could not be converted to ${s.format.toUpperCase()}: ${said.slice(0, 200)}` };
      }
      const size = (await stat(out)).size;
      const limit = this.mailer.config.maxAttachmentBytes;
      if (size > limit) return { ok: false, permanent: true, error: `converted, the book is ${(size / 1e6).toFixed(1)} MB: more than a mail may carry` };
      return await mail({ filename: s.file_name, contentType, path: out });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** The book's file of `format`, inside its library's folders, or null. */
  private async fileOf(s: Identity.BookSend, format: string): Promise<string | null> {
    const item = await this.reads.catalog.anyItem(s.item_id);
    if (!item) return null;
    const f = item.formats.find((x) => x.format === format);
    if (!f) return null;
    const folders = await this.reads.catalog.folders(item.library_id);
    if (!folders) return null;
    const found = await resolveInside(folders, f.file_path);
    return found?.abs ?? null;
  }
}
