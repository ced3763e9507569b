// Books mailed to e-reader addresses (issue 47). Identity records each send (pending, then sent,
// retried with backoff, or failed); this process mails them: the worker takes the sends that are
// due (a lease, so two gateways never mail one send at once), reads the book's file from its
// library folder, mails it and says what came of it.
import type { Catalog, Identity } from '@bindery/contracts';
import { resolveInside, type Logger, type Mailer } from '@bindery/platform';
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

/** The format to mail to `address`, or null when the book has none that address takes. */
export function bestFormat(formats: readonly Catalog.MediaFormat[], address: string): Catalog.MediaFormat | null {
  const takes = isKindle(address) ? KINDLE_TAKES : PREFERRED;
  for (const f of takes) {
    const found = formats.find((x) => x.format === f);
    if (found) return found;
  }
  return null;
}

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
      const due = (r.value as { data: Identity.BookSend[] }).data;
      for (const s of due) await this.deliver(s);
      if (due.length < 5 || this.stopped) return;
    }
  }

  private async deliver(s: Identity.BookSend): Promise<void> {
    const file = await this.fileOf(s);
    const outcome =
      file === null
        ? { ok: false as const, permanent: true, error: 'the book’s file is no longer in the library' }
        : await this.mailer.send({
            to: s.address,
            subject: s.title || s.file_name,
            text: `${s.title || s.file_name}, sent from Bindery.`,
            attachments: [{ filename: s.file_name, contentType: MIME[s.format] ?? 'application/octet-stream', path: file }],
          });
    const r = await this.call('send-result', {
      send_id: s.id,
      ok: outcome.ok,
      permanent: outcome.ok ? false : outcome.permanent,
      detail: (outcome.ok ? outcome.response : outcome.error).slice(0, 1000),
    });
    if (!r.ok) this.log.warn({ send: s.id, err: r.error.message }, 'the outcome of a send was not recorded');
  }

  /** The book's file of the send's format, inside its library's folders, or null. */
  private async fileOf(s: Identity.BookSend): Promise<string | null> {
    const item = await this.reads.catalog.anyItem(s.item_id);
    if (!item) return null;
    const f = item.formats.find((x) => x.format === s.format);
    if (!f) return null;
    const folders = await this.reads.catalog.folders(item.library_id);
    if (!folders) return null;
    const found = await resolveInside(folders, f.file_path);
    return found?.abs ?? null;
  }
}
