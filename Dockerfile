# syntax=docker/dockerfile:1
# Atlas image: one image for every service; the command picks it (`run api`, `run documents`, `run facts`,
# `run keyword`, `start`, `import <path>`, ...). The CLI is bundled into dist/cli by `npm run build` (docs/cli.md);
# bin/atlas.mjs runs that build, or the TypeScript through tsx when there is none.
#   docker build -t atlas:local .
#   docker run --rm -p 8000:8000 -e CREDENTIAL_MASTER_KEY=$(openssl rand -hex 32) atlas:local start
#                                      # embedded default (PGlite in /app/data); NODE_ENV=production needs the key
# docker-compose.yml runs the split services against Kafka, the registry and PostgreSQL.

# Only the manifests, so that `npm ci` below is re-run only when a package.json or the lockfile changes.
FROM node:20-bookworm-slim AS manifests
WORKDIR /src
COPY . .
RUN find . -type f ! -name package.json ! -name package-lock.json -delete \
 && find . -depth -type d -empty -delete

FROM node:20-bookworm-slim
# HOST=0.0.0.0: `atlas start` refuses to start until an API key exists: pass ATLAS_ADMIN_API_KEY (docs/access.md).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    ATLAS_DATA_DIR=/app/data \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY --from=manifests /src/ ./
# Runtime dependencies only (tsx and esbuild are dependencies of services/cli; vitest, biome and typescript are dev
# tools). No scripts yet: the root's `prepare` builds the CLI from sources this layer does not have; esbuild's own
# install script (the one allowScripts approves) runs with the build below.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && npm cache clean --force
COPY . .
RUN npm rebuild esbuild && npm run build
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8000
VOLUME ["/app/data"]
ENTRYPOINT ["node", "bin/atlas.mjs"]
CMD ["start"]
