# The otp-service image (docs/container.md): `docker build -t otp-service .`
#
# NODE_IMAGE is the Node.js 24 image both stages start from: the official one by default. Without a registry,
# scripts/container/build-local.sh makes localhost/otp-node:24 from Debian's packages and passes it here.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The dependencies in a layer of their own, so that a change to a source does not install them again. The
# lockfile names the client/ workspace, so npm ci needs its package.json. No dependency needs an install
# script, and the project's own (prepare) would build before the sources are here: the build is the next step.
COPY package.json package-lock.json ./
COPY client/package.json client/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && rm -f node_modules/@otp-service/client
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
COPY console/ console/
COPY scripts/build-if-stale.mjs scripts/build-console.mjs scripts/
RUN node scripts/build-if-stale.mjs --force

FROM ${NODE_IMAGE}
# A user of the image's own with a fixed uid, made the same way on the official image (which also has `node`,
# uid 1000) and on a minimal Debian base (which has no such user): a volume's owner is known in advance, and a
# numeric USER lets Kubernetes' runAsNonRoot check it.
RUN groupadd --gid 10001 otp \
  && useradd --uid 10001 --gid otp --home-dir /app --no-create-home --shell /usr/sbin/nologin otp \
  && mkdir -m 700 /data && chown otp:otp /data
WORKDIR /app
# HOST: on the embedded database the service would bind to 127.0.0.1, which nothing outside the container
# reaches; publishing the port (or not) is where a container's exposure is decided.
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=3000 \
  DATA_DIR=/data
# Owned by root, not writable by the service: what runs is what was built. src/ and the tsconfig files are
# the build's inputs, copied with their times, so `otp-service` (bin/) and `npm start` find dist/ up to date
# and never compile.
COPY --from=build /app/package.json /app/package-lock.json /app/tsconfig.json /app/tsconfig.build.json ./
COPY --from=build /app/node_modules/ node_modules/
COPY --from=build /app/src/ src/
COPY --from=build /app/console/ console/
COPY --from=build /app/dist/ dist/
COPY --from=build /app/scripts/build-if-stale.mjs /app/scripts/build-console.mjs scripts/
COPY bin/ bin/
# Fails the build, rather than the first `otp-service` command, if a builder did not keep the files' times.
RUN node --input-type=module -e "import { staleness } from '/app/scripts/build-if-stale.mjs'; \
  const why = staleness('/app'); if (why) { console.error('dist/ is not up to date: ' + why); process.exit(1); }"
USER 10001:10001
VOLUME ["/data"]
EXPOSE 3000
# Liveness only (GET /healthz); /readyz also checks the database, which is for a load balancer to ask.
# Node itself makes the request: slim images have no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM (docker stop) finishes in-flight requests for up to SHUTDOWN_GRACE_MS (10 s by default): give the
# container longer than that to stop (docker stop -t 15, compose's stop_grace_period).
CMD ["node", "dist/main.js"]
