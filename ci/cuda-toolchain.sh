#!/usr/bin/env bash
# Obtain the three NVIDIA files the CUDA provider needs to be compiled and
# its PTX validated on a machine without a GPU: cuda.h, the libcuda.so link
# stub, and ptxas. They come from Debian bookworm non-free (CUDA 11.8:
# nvidia-cuda-dev and nvidia-cuda-toolkit), fetched with a private APT
# configuration under the cache folder (the system's /etc/apt is never read
# for sources nor written). Only those three files are kept, in
# ${CUDA_TOOLCHAIN_DIR:-.cuda-toolchain}/ (git-ignored): NVIDIA's licence
# does not make them redistributable, never commit them.
#
# When the folder already holds all three, nothing is downloaded (cache).
# On success the last line printed is the environment to use, e.g.
#   eval "$(ci/cuda-toolchain.sh --env)"
# sets CGO_CFLAGS, CGO_LDFLAGS and PTXAS. When the download is impossible
# the script prints one line saying why and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${CUDA_TOOLCHAIN_DIR:-$root/.cuda-toolchain}
case "$dir" in /*) ;; *) dir=$root/$dir ;; esac

envonly=0
[ "${1:-}" = "--env" ] && envonly=1

say_env() {
  echo "export CGO_ENABLED=1 CGO_CFLAGS=-I$dir/include CGO_LDFLAGS=-L$dir/stubs PTXAS=$dir/bin/ptxas"
}

have_all() {
  [ -s "$dir/include/cuda.h" ] && [ -s "$dir/stubs/libcuda.so" ] && [ -x "$dir/bin/ptxas" ]
}

if have_all; then
  if [ $envonly = 1 ]; then say_env; else echo "cuda-toolchain: cached in $dir"; say_env; fi
  exit 0
fi

fail() { echo "cuda-toolchain: cannot obtain the CUDA 11.8 files from Debian bookworm non-free: $*" >&2; exit 1; }

for tool in apt-get dpkg-deb tar; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool not found (needs a Debian-like system)"
done

work=$dir/.apt
mkdir -p "$work/state/lists/partial" "$work/cache/archives/partial" "$work/etc/preferences.d" "$work/etc/apt.conf.d" "$work/debs"
cat >"$work/etc/sources.list" <<SRC
deb http://deb.debian.org/debian bookworm main contrib non-free
deb http://deb.debian.org/debian bookworm-updates main contrib non-free
deb http://deb.debian.org/debian-security bookworm-security main contrib non-free
SRC
cat >"$work/apt.conf" <<CONF
Dir::State "$work/state";
Dir::State::status "$work/state/status";
Dir::Cache "$work/cache";
Dir::Etc::sourcelist "$work/etc/sources.list";
Dir::Etc::sourceparts "$work/etc/none.d";
Dir::Etc::preferencesparts "$work/etc/preferences.d";
Dir::Etc::parts "$work/etc/apt.conf.d";
APT::Architecture "amd64";
Acquire::Languages "none";
Debug::NoLocking "true";
CONF
: >"$work/state/status"
export APT_CONFIG=$work/apt.conf

log=$work/log
apt-get -q update >"$log" 2>&1 || fail "apt-get update failed (network to deb.debian.org?): $(tail -n1 "$log")"
# apt-get update exits 0 even when every fetch failed: look for the index.
ls "$work"/state/lists/*non-free*_Packages* >/dev/null 2>&1 ||
  fail "apt-get update fetched no bookworm non-free package index (no network to deb.debian.org?): $(grep -m1 -E '^(W|E):' "$log" || true)"
(cd "$work/debs" && apt-get -q download nvidia-cuda-dev nvidia-cuda-toolkit >"$log" 2>&1) ||
  fail "apt-get download nvidia-cuda-dev nvidia-cuda-toolkit failed: $(tail -n1 "$log")"

# Globs, not `ls | head` (a SIGPIPE under pipefail): the first match, or "".
debs=("$work"/debs/nvidia-cuda-dev_*.deb); dev=${debs[0]}; [ -e "$dev" ] || dev=
debs=("$work"/debs/nvidia-cuda-toolkit_*.deb); tk=${debs[0]}; [ -e "$tk" ] || tk=
[ -n "$dev" ] && [ -n "$tk" ] || fail "downloaded .debs not found in $work/debs"

ex=$work/extract
rm -rf "$ex"; mkdir -p "$ex"
dpkg-deb --fsys-tarfile "$dev" | tar -x -C "$ex" ./usr/include/cuda.h ./usr/lib/x86_64-linux-gnu/stubs/libcuda.so ||
  fail "cuda.h or the libcuda.so stub missing from $(basename "$dev")"
dpkg-deb --fsys-tarfile "$tk" | tar -x -C "$ex" ./usr/bin/ptxas ||
  fail "ptxas missing from $(basename "$tk")"

mkdir -p "$dir/include" "$dir/stubs" "$dir/bin"
cp "$ex/usr/include/cuda.h" "$dir/include/cuda.h"
cp -L "$ex/usr/lib/x86_64-linux-gnu/stubs/libcuda.so" "$dir/stubs/libcuda.so"
cp "$ex/usr/bin/ptxas" "$dir/bin/ptxas"
chmod +x "$dir/bin/ptxas"
# Keep only the three files: the .debs are ~860 MB.
rm -rf "$work"
have_all || fail "extraction incomplete in $dir"
"$dir/bin/ptxas" --version >/dev/null 2>&1 || fail "ptxas does not run on this machine"
[ $envonly = 1 ] || echo "cuda-toolchain: cuda.h, libcuda.so stub and ptxas in $dir"
say_env
