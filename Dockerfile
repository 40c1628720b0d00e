# toolport: compiled by tsc in a build stage and run as plain JavaScript (node dist/server.js).
# Stage 1 compiles; stage 2 installs production dependencies only; stage 3 is the small runtime image.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs ./scripts/
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json package-lock.json ./
COPY --from=build --chown=node:node /app/dist ./dist
# The TypeScript sources too: the example plugins import their helpers from src/index.ts.
COPY --chown=node:node src ./src
COPY --chown=node:node examples ./examples
# The image's non-root user; the workspace folder is writable by it.
RUN mkdir -p /workspace && chown node:node /workspace
USER node
EXPOSE 8080
# SIGTERM drains in-flight calls (SHUTDOWN_GRACE_MS, default 10 s); keep the orchestrator's
# stop timeout above it (compose: stop_grace_period).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# One process (not npm, which forks): signals reach the server directly. Plugins written in
# TypeScript (TOOL_PLUGINS=….ts) are still loaded, through tsx's importer.
CMD ["node", "dist/server.js"]
