#!/bin/sh
# Builds the bench's baseline: this repository at the last commit that paired
# devices by commit, challenge and reveal (pairing version 1), in release, in a
# worktree of its own under .build-baseline/. Prints the folder holding its
# keyvault-bench and keyvault-relay. Built once; later runs reuse it.
set -eu
commit=d271e80
root=$(cd "$(dirname "$0")/.." && pwd)
tree="$root/.build-baseline/$commit"
if [ ! -e "$tree/.git" ]; then
    mkdir -p "$root/.build-baseline"
    git -C "$root" worktree add --detach "$tree" "$commit" >&2
fi
cd "$tree"
swift build -c release --product keyvault-bench >&2
swift build -c release --product keyvault-relay >&2
swift build -c release --show-bin-path
