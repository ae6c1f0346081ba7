#!/usr/bin/env bash
# demo_chroot.sh - `make demo` on a machine that has nothing: a fresh Debian 12 minbase chroot
# (debootstrap) with a snapshot of the repo (git archive: no build, no tests/node_modules), where
# scripts/deps.sh demo installs what it lists and `make demo` must then succeed. Prints the packages
# installed, whether any python3 / nodejs / golang / npm package or command is present (none may be),
# and the demo's output. Not a ctest test: it needs root, debootstrap and a Debian mirror, and takes
# ~5 minutes on 2 cores.
#   sudo bash tests/tools/demo_chroot.sh [REV] [WORKDIR]   (default: HEAD, build/demo-chroot; removed at the end)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
REV=${1:-HEAD}
W=${2:-$SRC/build/demo-chroot}
[[ $(id -u) == 0 ]] || { echo "demo_chroot.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "demo_chroot.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
rm -rf --one-file-system "$W"
trap 'rm -rf --one-file-system "$W"' EXIT
debootstrap --variant=minbase bookworm "$W" http://deb.debian.org/debian >"$W.debootstrap.log" 2>&1 \
  || { tail -5 "$W.debootstrap.log"; exit 1; }
mkdir -p "$W/src"
git -C "$SRC" archive "$REV" | tar -x -C "$W/src"
cp /etc/resolv.conf "$W/etc/resolv.conf"
cat >"$W/run.sh" <<'EOF'
#!/bin/bash
set -e
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
present() { local c; for c in python3 node npm go; do command -v $c >/dev/null && printf '%s ' $c; done; return 0; }
cd /src
echo "== commands present before deps.sh demo (of python3 node npm go): $(present)"
bash scripts/deps.sh demo
echo "== commands present after (of python3 node npm go): $(present)"
dpkg -l | grep -E "^ii +(python3|nodejs|golang|npm)" && { echo "FAIL: deps.sh demo installed one of them"; exit 1; }
echo "== no python3 / nodejs / golang / npm package installed ($(dpkg-query -W | wc -l) packages in all)"
time make demo
EOF
chmod +x "$W/run.sh"
# a private mount namespace: /proc and /dev for the chroot vanish with it
unshare -m --propagation private bash -c "mount -t proc proc '$W/proc' && mount --rbind /dev '$W/dev' && chroot '$W' /run.sh"
