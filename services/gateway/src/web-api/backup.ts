// Backups (issue 46): GET /api/admin/backup makes one now and sends it (admins only), and the
// schedule the settings `backup_folder`, `backup_interval_hours` and `backup_keep` ask for writes
// one into that folder each interval and keeps the newest `backup_keep`. The archive is made by the
// process's backup source (platform/src/backup): PGlite's own image in embedded mode, pg_dump of
// every schema from one snapshot in distributed mode.
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { fail } from '@bindery/contracts';
import type { Logger } from '@bindery/platform';
import type { BackupSource } from '@bindery/platform/backup';
import type { Auth } from '../http/authenticate';
import { liftDeadline } from '../http/request-deadline';
import { sendFailure } from '../http/reply';
import { errors, SIGNED_IN } from '../http/schemas';

export const BackupMessages = {
  unavailable: 'backups are not available in this process',
  failed: 'the backup could not be made; the server log says why',
} as const;

/** `bindery-backup-20261202T105500Z.zip`: what the schedule writes, and the only names it prunes */
const SCHEDULED = /^bindery-backup-\d{8}T\d{6}Z\.zip$/;
export const backupFileName = (at: Date) =>
  `bindery-backup-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')}.zip`;

/** One backup at a time in a process: a second waits for the first. */
function serialised(source: BackupSource): (file: string) => Promise<void> {
  let last: Promise<unknown> = Promise.resolve();
  return (file) => {
    const run = last.then(
      () => source.write(file),
      () => source.write(file),
    );
    last = run.catch(() => undefined);
    return run.then(() => undefined);
  };
}

export interface BackupSettings {
  folder: string;
  intervalHours: number;
  keep: number;
}

export interface BackupDeps {
  auth: Auth;
  log: Logger;
  source?: BackupSource;
  /** the backup settings as the identity read model holds them */
  settings: () => Promise<BackupSettings>;
  now?: () => Date;
  /** how often the schedule looks at its settings and its folder (default 10 s) */
  checkMs?: number;
}

export function backupRoutes(app: FastifyInstance, d: BackupDeps): void {
  const write = d.source ? serialised(d.source) : null;
  const now = d.now ?? (() => new Date());
  app.get(
    '/api/admin/backup',
    {
      onRequest: d.auth.requireAdmin,
      schema: {
        tags: ['admin'],
        summary: 'make a backup now and download it',
        description: 'A ZIP archive with a manifest: every service’s log and state from one consistent snapshot. `pnpm restore <file>` puts it back.',
        response: { 200: Type.Unknown({ description: 'the archive (application/zip)' }), ...errors(...SIGNED_IN, 500, 503) },
      },
    },
    async (req, reply) => {
      if (!write) return sendFailure(reply, fail('service_unavailable', BackupMessages.unavailable));
      // the caller is an admin: the snapshot may take longer than a request's deadline
      liftDeadline(req);
      const dir = await mkdtemp(join(tmpdir(), 'bindery-backup-'));
      const name = backupFileName(now());
      const file = join(dir, name);
      try {
        await write(file);
      } catch (e) {
        await rm(dir, { recursive: true, force: true });
        req.log.error({ err: e }, 'backup failed');
        return sendFailure(reply, fail('internal', BackupMessages.failed));
      }
      const stream = createReadStream(file);
      stream.once('close', () => void rm(dir, { recursive: true, force: true }));
      return reply.header('content-type', 'application/zip').header('content-disposition', `attachment; filename="${name}"`).header('cache-control', 'no-store').send(stream);
    },
  );
  if (!write) return;
  const schedule = new BackupSchedule(write, d.settings, d.log, now);
  const timer = setInterval(() => void schedule.tick(), d.checkMs ?? 10_000);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await schedule.idle();
  });
}

/** The scheduled backup: one into the folder when the newest there is older than the interval, then the oldest past `keep` removed. */
export class BackupSchedule {
  private running: Promise<void> | null = null;

  constructor(
    private readonly write: (file: string) => Promise<void>,
    private readonly settings: () => Promise<BackupSettings>,
    private readonly log: Logger,
    private readonly now: () => Date,
  ) {}

  tick(): Promise<void> {
    this.running ??= this.once().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async idle(): Promise<void> {
    await this.running;
  }

  private async once(): Promise<void> {
    let s: BackupSettings;
    try {
      s = await this.settings();
    } catch {
      return;
    }
    if (s.folder === '' || !isAbsolute(s.folder)) return;
    try {
      await mkdir(s.folder, { recursive: true, mode: 0o700 });
      const names = (await readdir(s.folder)).filter((n) => SCHEDULED.test(n)).sort();
      const newest = names.at(-1);
      const at = this.now();
      const due = !newest || newest < backupFileName(new Date(at.getTime() - s.intervalHours * 3_600_000));
      if (due) {
        const name = backupFileName(at);
        await this.write(join(s.folder, name));
        this.log.info({ folder: s.folder, file: name }, 'scheduled backup written');
        if (!names.includes(name)) names.push(name);
      }
      for (const old of names.slice(0, Math.max(0, names.length - s.keep))) {
        await rm(join(s.folder, old), { force: true });
        this.log.info({ folder: s.folder, file: old }, 'old backup removed (backup_keep)');
      }
    } catch (e) {
      this.log.warn({ err: e, folder: s.folder }, 'scheduled backup failed; trying again at the next check');
    }
  }
}
