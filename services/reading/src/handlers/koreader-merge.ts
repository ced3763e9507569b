// KOReader's plugin pushes a book's annotations as the device holds them, and the keys it deleted:
// merged here with what is stored, matched by the key a device knows an annotation by (its
// `dedup_key`, or its id when it was made on the web). A key deleted on the server is never brought
// back by a stale push; an echo without a colour leaves the stored colour alone.
import { ok, Reading, type Result } from '@bindery/contracts';
import type { Ctx } from './context';
import { createAnnotation, deleteAnnotation, listAnnotations, listDeleted, updateAnnotation } from './annotations';
import type { Answer, Req } from './util';

type Kind = Reading.AnnotationRecord['type'];
type Stored = Reading.AnnotationRecord;
const KINDS: readonly Kind[] = ['highlight', 'note', 'bookmark'];

/** The key a device knows an annotation by. */
const keyOf = (a: Stored) => a.dedup_key ?? a.id;

/** The caller's annotations of the item, live and deleted. */
async function stored(ctx: Ctx, req: Req<'annotations-merge'>): Promise<Result<{ live: Stored[]; deleted: Stored[] }>> {
  const live: Stored[] = [];
  for (const kind of KINDS) {
    const r = await listAnnotations(ctx, { ...req, kind });
    if (!r.ok) return r;
    live.push(...r.value.data);
  }
  const d = await listDeleted(ctx, req);
  if (!d.ok) return d;
  return ok({ live, deleted: d.value.data });
}

const textOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const keysOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((k): k is string => typeof k === 'string') : []);
const listOf = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null) : []);

/**
 * `input`: `{bookmarks, notes, highlights}` as the device sends them. Answers how many were created,
 * unchanged and updated, those ignored (and why), and what placing new ones in the book healed.
 */
export async function mergeAnnotations(ctx: Ctx, req: Req<'annotations-merge'>): Answer<'annotations-merge'> {
  const existing = await stored(ctx, req);
  if (!existing.ok) return existing;
  const input = req.input ?? {};
  const out = {
    created: 0,
    unchanged: 0,
    updated: 0,
    ignored: [] as { dedup_key: string | null; reason: string }[],
    healed: [] as { dedup_key: string | null; healed: string[] }[],
  };
  const batches: [Kind, Record<string, unknown>[]][] = [
    ['bookmark', listOf(input.bookmarks)],
    ['note', listOf(input.notes)],
    ['highlight', listOf(input.highlights)],
  ];
  for (const [kind, list] of batches) {
    for (const x of list) {
      const key = textOf(x.dedup_key) || null;
      const known = key ? existing.value.live.find((a) => a.type === kind && keyOf(a) === key) : undefined;
      if (known) {
        // an echo without a colour leaves the stored (web) colour alone; a colour sent is a device edit
        const changes: Record<string, unknown> = {};
        const color = textOf(x.color);
        if (color && Reading.paletteNameOf(known.color) !== color.toLowerCase() && known.color !== color.toLowerCase()) changes.color = color;
        if (typeof x.note === 'string' && x.note !== known.note) changes.note = x.note;
        if (Object.keys(changes).length === 0) {
          out.unchanged += 1;
          continue;
        }
        const u = await updateAnnotation(ctx, { ...req, id: known.id, kind, input: changes });
        if (!u.ok) {
          out.ignored.push({ dedup_key: key, reason: u.error.message });
          continue;
        }
        out.updated += 1;
        continue;
      }
      const fields: Record<string, unknown> = { dedup_key: key ?? undefined };
      for (const k of ['pos0', 'pos1', 'page', 'percentage', 'chapter', 'text', 'note', 'color'] as const) if (x[k] !== undefined && x[k] !== null) fields[k] = x[k];
      const r = await createAnnotation(ctx, { ...req, kind, input: fields });
      if (!r.ok) {
        // a key deleted on the server: a stale replay, which never brings it back
        out.ignored.push({ dedup_key: key, reason: r.error.code === 'conflict' ? 'deleted on the server' : r.error.message });
        continue;
      }
      const made = r.value;
      if (made.existing) out.unchanged += 1;
      else out.created += 1;
      if (made.healed.length) out.healed.push({ dedup_key: key, healed: made.healed });
    }
  }
  return ok(out);
}

/**
 * Deletes live annotations by the keys the device names: `input.highlights` (highlights and notes)
 * and `input.bookmarks`. Unknown keys and keys already deleted are ignored, and said so.
 */
export async function deleteByKeys(ctx: Ctx, req: Req<'annotations-delete-keys'>): Answer<'annotations-delete-keys'> {
  const input = req.input ?? {};
  const groups: [string[], Kind[]][] = [
    [keysOf(input.highlights), ['highlight', 'note']],
    [keysOf(input.bookmarks), ['bookmark']],
  ];
  const ignored: { key: string; reason: string }[] = [];
  const deleted: [number, number] = [0, 0];
  if (groups.every(([keys]) => keys.length === 0)) return ok({ deleted: { highlights: 0, bookmarks: 0 }, ignored });
  // listed once for both: the two deletions touch disjoint kinds
  const all = await stored(ctx, req);
  if (!all.ok) return all;
  for (const [i, [keys, kinds]] of groups.entries()) {
    for (const key of new Set(keys)) {
      const live = all.value.live.find((a) => kinds.includes(a.type) && keyOf(a) === key);
      if (!live) {
        const gone = all.value.deleted.some((a) => kinds.includes(a.type) && keyOf(a) === key);
        ignored.push({ key, reason: gone ? 'already deleted' : 'unknown key' });
        continue;
      }
      const r = await deleteAnnotation(ctx, { ...req, id: live.id, kind: live.type });
      if (!r.ok) return r;
      deleted[i]! += 1;
    }
  }
  return ok({ deleted: { highlights: deleted[0], bookmarks: deleted[1] }, ignored });
}
