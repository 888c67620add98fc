# Outpost agent image: `outpost agent` on Node 24 LTS.
# Build: docker build -t outpost-agent .
# Run:   docker run -e API_KEY=... -e SERVICE_URL=https://... -p 8081:8081 outpost-agent
#        (ICMP: Docker sets net.ipv4.ping_group_range for containers, so no capability is needed;
#         on older engines add --cap-add NET_RAW)
#        Least privilege: --cap-drop ALL --cap-add SETUID --cap-add SETGID --cap-add KILL
#        --cap-add CHOWN --cap-add DAC_OVERRIDE --cap-add FOWNER (what outpost-entrypoint keeps).
#
# Privilege separation (docs/security.md): the container starts as root only for
# scripts/outpost-entrypoint.sh, which execs the agent as `node` (uid 1000) holding six capabilities
# and nothing else, with API_KEY moved out of every environment. The agent runs each script,
# browser and check suite as a uid of its own with no capability at all; never as `node`.

FROM node:24-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json binding.gyp ./
COPY native ./native
COPY scripts ./scripts
# postinstall installs runtimes/*/ dependencies (what setup/teardown scripts may require).
COPY runtimes ./runtimes
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
# The web app (served by `outpost service`; built into dist/app by npm run build).
COPY app ./app
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# tcpdump records the packet capture of a failed connection (network traces of API and URL
# checks); file capabilities let the unprivileged `node` user run it within Docker's default
# capability set (NET_RAW). Without them the agent attaches the route trace only.
# chromium + fonts-liberation: the browser runtime 2026.04's Playwright drives (CHROMIUM_PATH;
# Playwright downloads none), ffmpeg: video recording of browser checks. tini: PID 1 reaps
# orphaned processes (a Chromium child whose parent died), so no zombie outlives a check.
# The managed Chromium policy blocks file:// and view-source: URLs: a second wall in front of
# the agent's files, besides the uid of its own every check's browser runs as.
RUN apt-get update && apt-get install -y --no-install-recommends tcpdump libcap2-bin \
    chromium fonts-liberation ffmpeg tini \
  && setcap cap_net_raw+eip /usr/bin/tcpdump \
  && apt-get purge -y libcap2-bin && rm -rf /var/lib/apt/lists/* \
  && mkdir -p /etc/chromium/policies/managed \
  && printf '%s\n' '{"URLBlocklist": ["file://*", "view-source:*", "chrome://*"]}' \
    > /etc/chromium/policies/managed/outpost.json
# AGENT_HEALTH_HOST=0.0.0.0: the health server defaults to loopback, which the kubelet's probes and
# `docker run -p 8081:8081` cannot reach (docs/configuration.md).
ENV NODE_ENV=production \
    AGENT_HEALTH_PORT=8081 \
    AGENT_HEALTH_HOST=0.0.0.0 \
    HOST=0.0.0.0 \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/build/Release/outpost_icmp.node ./build/Release/outpost_icmp.node
COPY --from=build /app/dist ./dist
COPY --from=build /app/runtimes ./runtimes
COPY --from=build /app/scripts/outpost-entrypoint.sh /usr/local/bin/outpost-entrypoint
# No USER line: outpost-entrypoint starts as root and drops to `node` (OUTPOST_AGENT_USER) itself.
EXPOSE 8081
HEALTHCHECK --interval=30s --timeout=3s CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.AGENT_HEALTH_PORT||8081)+'/-/liveness').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Kubernetes sends SIGTERM; the agent drains running jobs (AGENT_SHUTDOWN_GRACE_SECONDS) and exits 0.
# --disable-sigusr1: no signal opens the inspector of a process running user scripts.
# tini runs as PID 1 and forwards signals to the agent; outpost-entrypoint drops privileges.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/outpost-entrypoint", "node", "--disable-sigusr1", "dist/src/cli.js"]
CMD ["agent"]
