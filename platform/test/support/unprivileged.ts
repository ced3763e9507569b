// For tests of unreadable folders and files when the suite runs as root.

/**
 * Runs fn without root's permission override: mode 000 means nothing to root. Only the
 * effective uid changes (the saved uid stays 0), so root comes back afterwards; vitest runs each
 * test file in its own process, so no other test sees the switch.
 */
export async function asUnprivileged<T>(fn: () => Promise<T>): Promise<T> {
  if (process.getuid?.() !== 0 || !process.seteuid) return fn();
  process.seteuid(65534);
  try {
    return await fn();
  } finally {
    process.seteuid(0);
  }
}
