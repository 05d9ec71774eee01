# mcp-tasks as an OCI image: the CLI as entrypoint, `serve` with the demo tools by default, bound
# for a container, its SQLite file in the /data volume. How to run it, alone or as a cluster with
# compose.yaml: docs/deployment.md. test/containers/ builds and runs this very file.
#
#   docker build -t mcp-tasks .
#   docker run -p 3000:3000 -v mcp-tasks-data:/data mcp-tasks
#
# The base image: any Debian-based image with Node at /usr/local (the official image's layout);
# the build stage compiles better-sqlite3 against its headers.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: every dependency (dev ones too), the TypeScript compiled to dist/, then the tree
# pruned to what the server runs with.
FROM ${NODE_IMAGE} AS build
# better-sqlite3 is a native addon: when no prebuilt binary can be downloaded it is compiled, with
# the image's own Node headers (npm would otherwise download them).
RUN if ! command -v make >/dev/null || ! command -v g++ >/dev/null || ! command -v python3 >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*; \
    fi
ENV npm_config_nodedir=/usr/local \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /app
# The lock file and the install's own script first: this layer is reused until they change.
COPY package.json package-lock.json ./
COPY scripts/unlink-bundled-node.mjs scripts/container-manifest.mjs scripts/
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin/mcp-tasks.js ./bin/
RUN npm run build \
 && node scripts/container-manifest.mjs \
 && npm prune --omit=dev \
 && node -e "require('better-sqlite3')(':memory:').close()"

# ---- run: production dependencies only, as an unprivileged user.
FROM ${NODE_IMAGE}
LABEL io.modelcontextprotocol.server.name="io.github.mcp-tasks/mcp-tasks" \
      org.opencontainers.image.title="mcp-tasks" \
      org.opencontainers.image.description="Durable MCP Tasks server: SQLite or a PostgreSQL cluster" \
      org.opencontainers.image.licenses="MIT"
# A fixed numeric id, so `runAsNonRoot` policies can verify it without reading /etc/passwd.
RUN groupadd --gid 10001 mcp \
 && useradd --uid 10001 --gid mcp --home-dir /data --no-create-home --shell /usr/sbin/nologin mcp \
 && mkdir /data && chown mcp:mcp /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
ENV NODE_ENV=production \
    PORT=3000
USER 10001:10001
VOLUME ["/data"]
EXPOSE 3000
# /healthz answers 200 while the process serves HTTP (/readyz also checks the store). Node's own
# fetch: the image needs no curl. PORT is the port `serve` listens on (its --port reads it).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/mcp-tasks.js"]
# Every interface of the container, since its port is published: the Host check of a loopback
# bind does not apply there, and the Origin check serves browser pages only from loopback origins
# (a port published on the host, opened as http://localhost:PORT) and from the origins named in
# MCP_TASKS_ALLOWED_ORIGINS (--allowed-origins), none by default. Replace the arguments to serve
# your own tools: `serve --tools /tools/index.js --host 0.0.0.0 --store sqlite:/data/tasks.db`.
CMD ["serve", "--demo", "--host", "0.0.0.0", "--store", "sqlite:/data/tasks.db"]
