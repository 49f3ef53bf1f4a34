#!/usr/bin/env bash
# The CI stage of the CUDA provider, for a machine without a GPU: obtain
# the toolchain (ci/cuda-toolchain.sh), vet the cuda-tagged build, compile
# (never run) the test binary of every package with CUDA code, and run
# ptxas for sm_90 and sm_80 on every embedded PTX file. Any error fails.
# It never runs `go test -tags cuda`: a binary linking gorgonia.org/cu
# exits in its package init without a driver.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
env_line=$(ci/cuda-toolchain.sh --env) || exit 1
eval "$env_line"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "-- go vet -tags cuda ./..."
go vet -tags cuda ./...

# Packages with CUDA code: those with a file constrained by the cuda tag
# and those (or whose tests) import the cuda package.
pkgs=$(go list -tags cuda -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
  awk '/gorgonia.org\/cu( |$)|tlcheck\/cuda( |$)/ {print $1}' | sort -u)
for p in $pkgs; do
  echo "-- go test -c -tags cuda $p"
  go test -c -tags cuda -o "$tmp/$(basename "$p").test" "$p"
done

echo "-- ptxas sm_90, sm_80"
n=0
for f in cuda/kernels/*.ptx; do
  for arch in sm_90 sm_80; do
    "$PTXAS" -arch=$arch -o "$tmp/k.cubin" "$f"
  done
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "cuda-stage: no PTX files in cuda/kernels" >&2; exit 1; }
echo "cuda-stage: $n PTX files valid for sm_90 and sm_80; $(echo $pkgs | wc -w) packages compiled; $(( $(date +%s) - start )) s"
