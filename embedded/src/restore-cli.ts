// `pnpm restore <file>`: puts a backup back, with Bindery stopped.
//   embedded (no DATABASE_URL): into DATA_DIR (default ./data), which must be missing or empty.
//   distributed (DATABASE_URL): into that database, which must hold no Bindery schema, in one
//     transaction; NATS_URL's Bindery streams must be empty (a fresh server), since every log is
//     published again from its start.
// The archive is checked whole (manifest, every part's size and SHA-256) before anything is written;
// the next start rebuilds the gateway's read models from the logs.
import { resolve } from 'node:path';
import { BackupError, binderyStreams, type Manifest, restoreEmbedded, restorePostgres } from '@bindery/platform/backup';

const env = process.env;

async function main(): Promise<void> {
  const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (files.length !== 1) throw new BackupError('usage: pnpm restore <file>');
  const file = resolve(files[0]!);
  let m: Manifest;
  let into: string;
  if (env.DATABASE_URL) {
    const nats = env.NATS_URL
      ? {
          streams: () =>
            binderyStreams({
              url: env.NATS_URL!,
              ...(env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' } : {}),
              ...(env.NATS_CREDS ? { credsFile: env.NATS_CREDS } : {}),
            }),
        }
      : {};
    m = await restorePostgres(file, { url: env.DATABASE_URL, ...nats });
    into = 'the database';
  } else {
    into = resolve(env.DATA_DIR ?? './data');
    m = await restoreEmbedded(file, into);
  }
  process.stdout.write(
    `restored into ${into}: the backup of ${m.created_at} (${m.mode}, Bindery ${m.bindery_version}); the read models are rebuilt from the logs at the next start\n`,
  );
}

main().catch((e) => {
  process.stderr.write(`restore failed: ${e instanceof BackupError ? e.message : ((e as Error).stack ?? String(e))}\n`);
  process.exitCode = 1;
});
