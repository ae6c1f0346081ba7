#!/usr/bin/env bash
# deps.sh - make sure every build and test dependency is present.
#   bash scripts/deps.sh        everything (build + test toolchain: torch, Go, npm oracles, ...)
#   bash scripts/deps.sh demo   only what `make demo` uses: the build dependencies. The demo model is
#                               written by the build's own C program (scripts/demo_model.c) with the
#                               RWKV world vocabulary the repo carries: no Python, no npm, no network
# As root: says which Debian packages are missing, then installs only those (apt-get install
# --no-upgrade: nothing already installed is upgraded; the package lists are refreshed with apt-get
# update only if that install fails), and the pinned npm oracles (npm install in tests/).
# Otherwise: prints the exact command to run and exits 1 if anything is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(cmake make gcc pkg-config libcurl4-openssl-dev zlib1g-dev libcjson-dev libcunit1-dev libssl-dev
      libpcre2-dev golang-go python3 python3-jinja2 python3-numpy python3-torch python3-yaml nodejs npm time clang libclang-rt-14-dev)

MODE=${1:-all}
if [[ $MODE == demo ]]; then
  PKGS=(cmake make gcc pkg-config libcurl4-openssl-dev zlib1g-dev libcjson-dev libcunit1-dev libssl-dev
        libpcre2-dev)
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# nodejs from other sources bundles npm; accept a working npm command instead of the Debian package.
if [[ " ${missing[*]} " == *" npm "* ]] && command -v npm >/dev/null; then
  missing=("${missing[@]/npm}")
fi
if [[ " ${missing[*]} " == *" nodejs "* ]] && command -v node >/dev/null; then
  missing=("${missing[@]/nodejs}")
fi
read -r -a missing <<< "${missing[*]:-}"

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "deps: missing Debian packages, installing only these (nothing installed is upgraded): ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}"; then
      echo "deps: apt-get install failed; refreshing the package lists (apt-get update) and trying once more"
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends --no-upgrade "${missing[@]}"
    fi
  else
    echo "deps: missing Debian packages. Run:" >&2
    echo "  sudo apt-get install -y --no-upgrade ${missing[*]}" >&2
    exit 1
  fi
fi

# the demo needs nothing from npm
if [[ $MODE == demo ]]; then
  echo "deps (demo): ok"
  exit 0
fi

# npm oracles (llama.cpp via node-llama-cpp, HF tokenizers, @huggingface/gguf), pinned by the lock.
# --omit=optional keeps npm from fetching every GPU build; the linux-x64 CPU build is a direct
# dependency. --ignore-scripts: node-llama-cpp's postinstall would try to download/build binaries.
# `npm install` with the committed lock rather than `npm ci`: node-llama-cpp 3.22.1 names optional
# platform packages that were never published at that version (mac-x64, win-*, linux-riscv64), so
# the lock cannot list them and `npm ci` refuses the tree as out of sync.
stamp=tests/node_modules/.sunny-stamp
if [[ ! -f $stamp || tests/package-lock.json -nt $stamp ]]; then
  if ! command -v npm >/dev/null; then echo "deps: npm not found" >&2; exit 1; fi
  (cd tests && npm install --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error)
  touch "$stamp"
fi
echo "deps: ok"
