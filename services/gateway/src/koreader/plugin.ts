// The KOReader plugin API (device credential, never a session): /api/sync/koreader/progress,
// metadata/<uuid>, library, bookmarks, resolve. A book is found by uuid, then SHA-256 (the item's,
// then a format's, then one it had), then the file name of `file_path`, then title and author.
// Annotations cross the boundary in the plugin's shape: palette names ↔ the web's hex, an echo
// without a colour changes nothing, deletions only through the explicit arrays and only by keys the
// server gave out, a deleted key never comes back, and the metadata fetch carries the tombstones.
// Their places are the reading service's canonical spans: pos0/pos1 go in as XPointers and come
// back as XPointers derived from the span, whichever client made the annotation.
import type { FastifyInstance } from 'fastify';
import { pluginBookmarksRoute, pluginMetadataRoute } from './plugin-annotations';
import { type PluginDeps, pluginContext } from './plugin-context';
import { pluginBookRoutes } from './plugin-library';
import { pluginProgressRoute } from './plugin-progress';

export function koreaderPluginRoutes(app: FastifyInstance, deps: PluginDeps): void {
  const ctx = pluginContext(deps);
  pluginBookRoutes(app, ctx);
  pluginProgressRoute(app, ctx);
  pluginMetadataRoute(app, ctx);
  pluginBookmarksRoute(app, ctx);
}
