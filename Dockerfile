# One image for every Bindery process. `node dist/main.js` (the default) runs every service in one
# process (embedded unless DATABASE_URL and NATS_URL are set); `node dist/service.js` with
# BINDERY_SERVICES=identity|catalog|reading|device-sync|gateway is one distributed service.
#   docker build -t bindery:0.1.0 .

# ---- build: the workspace bundled (CI type-checks; tests are not in the context) ---------------
FROM node:20.20.2-bookworm-slim AS build
RUN npm install -g pnpm@10.34.9
WORKDIR /src
# manifests first: the dependency layer is reused until one of them changes. Every workspace package's
# manifest (test/fault/image-build.int.test.ts replays these steps and fails on a missing one)
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY contracts/package.json contracts/
COPY locator/package.json locator/
COPY platform/package.json platform/
COPY services/identity/package.json services/identity/
COPY services/catalog/package.json services/catalog/
COPY services/reading/package.json services/reading/
COPY services/device-sync/package.json services/device-sync/
COPY services/gateway/package.json services/gateway/
COPY embedded/package.json embedded/
COPY web/package.json web/
COPY test/package.json test/
RUN pnpm install --frozen-lockfile
COPY . .
# the app package alone: embedded/dist plus its production dependencies, nothing of the workspace
RUN node embedded/build.mjs \
 && pnpm --filter @bindery/embedded deploy --prod --legacy /app

# ---- run ---------------------------------------------------------------------------------------
FROM node:20.20.2-bookworm-slim
# MALLOC_ARENA_MAX: glibc's per-thread malloc arenas (libvips' cover threads) kept ~70 MB of freed memory;
# NODE_OPTIONS: a 1 GiB heap cap makes V8 collect at ~1.6x the live heap, not 4x (docs/decisions.md, record 7)
ENV NODE_ENV=production DATA_DIR=/data PORT=8080 OPS_PORT=9464 MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-old-space-size=1024
WORKDIR /app
# owned by root and read-only to the process; only DATA_DIR (a volume) is its own
COPY --from=build /app /app
# the KOReader plugin, served as a zip at /api/koreader/plugin (found next to dist/)
COPY --from=build /src/clients/koreader/bindery.koplugin /app/clients/koreader/bindery.koplugin
# pdftoppm renders PDF covers and streamed PDF pages, pdfinfo sizes the pages first (without them, PDFs get
# neither); prlimit (util-linux, already in the base image) limits each page render's memory
RUN apt-get update && apt-get install -y --no-install-recommends poppler-utils \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown 1000:1000 /data
USER 1000:1000
VOLUME ["/data"]
EXPOSE 8080 9464
# the ops listener (OPS_PORT) answers /healthz in every process, gateway or not
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.OPS_PORT||9464)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
