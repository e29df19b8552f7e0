#!/usr/bin/env bash
# Lays out the build context that deploy/Dockerfile's build stage sees, in DIR: exactly the paths its COPY lines
# name (tracked files only, so nothing .dockerignore keeps out: no .build, .state, secrets), with their
# modification times, so that a build in DIR is incremental from one run to the next.
#
#   deploy/dist/context.sh DIR
#
# `make dist` builds the released herald in this copy (`swift build --package-path DIR`): the binary that ships is
# built from what the image's build sees, so a Dockerfile that leaves out a directory the manifest needs fails
# `make dist` (and so CI), as it would fail `docker build`. PackagingTests checks the same context with SwiftPM.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
cd -- "$ROOT"
die() { echo "context.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: context.sh DIR"
dir=$1

# The build stage's COPY lines (up to the second FROM): every argument but the last is a path of the context.
mapfile -t paths < <(awk '
    /^FROM / { stage++ }
    stage == 1 && /^COPY / {
        for (i = 2; i < NF; i++) if ($i !~ /^--/) print $i
    }' deploy/Dockerfile)
((${#paths[@]} > 0)) || die "deploy/Dockerfile has no COPY line in its build stage"
for path in "${paths[@]}"; do
    [ -e "$path" ] || die "deploy/Dockerfile copies $path, which this checkout does not have"
done

# A file is copied only when it differs (the build system compares inodes and times, so an untouched copy keeps a
# release build incremental), and a file the context no longer has is removed.
mkdir -p -- "$dir"
mapfile -d '' -t files < <(git ls-files -z -- "${paths[@]}")
declare -A wanted=()
for file in "${files[@]}"; do
    wanted[$file]=1
    cmp -s -- "$file" "$dir/$file" || cp --parents -p -- "$file" "$dir"
done
while IFS= read -r -d '' stale; do
    [ -n "${wanted[${stale#./}]:-}" ] || rm -f -- "$dir/$stale"
done < <(cd -- "$dir" && find . -type f -print0)
echo "context.sh: ${#paths[@]} paths of deploy/Dockerfile's build context in $dir ($(find "$dir" -type f | wc -l) files)"
