# syntax=docker/dockerfile:1
# Atlas image: one image for every service; the command picks it (`run api`, `run documents`, `run facts`,
# `run keyword`, `start`, `import <path>`, ...). No build step: bin/atlas.mjs loads the TypeScript through tsx.
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
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000 \
    ATLAS_DATA_DIR=/app/data \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY --from=manifests /src/ ./
# Runtime dependencies only (tsx is a dependency of services/cli; vitest, biome and typescript are dev tools).
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY . .
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8000
VOLUME ["/app/data"]
ENTRYPOINT ["node", "bin/atlas.mjs"]
CMD ["start"]
