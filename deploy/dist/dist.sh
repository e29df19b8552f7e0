#!/usr/bin/env bash
# Makes the release artifacts in dist/ from the release `herald` that `make dist` has just built
# (swift build -c release --static-swift-stdlib --product herald):
#
#   dist/herald-VERSION-linux-ARCH.tar.gz         herald (Swift runtime linked statically) and herald.sha256,
#                                                 schemas/, deploy/ (systemd, compose, k8s, Dockerfile, ...),
#                                                 LICENSE, NOTICE, THIRD-PARTY-NOTICES, README.md, CHANGELOG.md
#   dist/herald_VERSION_DEBARCH.deb               /usr/bin/herald, /usr/share/herald/schemas, systemd units,
#                                                 /etc/herald/*.env (conffiles), a `herald` system user (postinst)
#   dist/*.sha256                                 the SHA-256 of each, as `sha256sum -c` reads it
#
# VERSION is HeraldVersion.number (Sources/HeraldCLI/HeraldVersion.swift), the number CHANGELOG.md's latest release
# heading and `herald --version` give. deploy/dist/check-deb.sh installs the package and runs it.
set -euo pipefail
umask 022

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
cd -- "$ROOT"
DIST=${DIST_DIR:-$ROOT/dist}
DEB_MAINTAINER=${DEB_MAINTAINER:-Herald maintainers <herald@example.invalid>}

die() { echo "dist.sh: $*" >&2; exit 1; }

# dpkg-shlibdeps (dpkg-dev) maps the binary's libraries to Debian packages; a bare Debian 12 with Swift may lack it.
if ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] || die "needs dpkg-shlibdeps: apt-get install dpkg-dev"
    echo "dist.sh: installing dpkg-dev (dpkg-shlibdeps)"
    (env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
        env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dpkg-dev) >/dev/null
fi

version=$(sed -n 's/^ *static let number = "\([0-9][0-9.]*\)"$/\1/p' Sources/HeraldCLI/HeraldVersion.swift)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "no version in Sources/HeraldCLI/HeraldVersion.swift"
# The default .build's release binary (the path `swift build -c release --show-bin-path` prints), or HERALD_BIN.
bin=${HERALD_BIN:-$ROOT/.build/release/herald}
[ -x "$bin" ] || die "$bin is missing: run make dist (it builds it)"

# The binary is the release it claims to be, and needs no Swift runtime on the host.
printed=$("$bin" --version)
[[ $printed == "herald $version "* ]] || die "$bin --version prints '$printed', not version $version"
# ldd's whole output first: `ldd | grep -q` under pipefail can fail on ldd's SIGPIPE and hide a match.
libraries=$(ldd "$bin")
if grep 'libswiftCore\|libFoundation\|not found' <<<"$libraries" >/dev/null; then
    printf '%s\n' "$libraries" >&2
    die "$bin links the Swift runtime dynamically or misses a library: build it with --static-swift-stdlib"
fi
echo "dist.sh: $printed"

arch=$(uname -m)
debarch=$(dpkg --print-architecture)
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH=$epoch
stage=$DIST/.stage
rm -rf -- "$stage"
mkdir -p -- "$stage"

# Tracked files only (never deploy/compose/private/, whatever is on this machine); dev scripts and this packaging
# stay in the repository.
tracked() {
    if git rev-parse --git-dir >/dev/null 2>&1; then
        git ls-files -- "$@"
    else
        find "$@" -type f ! -path 'deploy/compose/private/*' | sort
    fi
}

# Every dependency's licence and NOTICE, as the packages checked out for this build carry them.
notices=$stage/THIRD-PARTY-NOTICES
{
    echo "Third-party software in the herald binary (Swift packages linked statically; see NOTICE)."
    for dir in "${HERALD_CHECKOUTS:-.build/checkouts}"/*/; do
        name=$(basename -- "$dir")
        for file in "$dir"LICENSE* "$dir"LICENCE* "$dir"NOTICE* "$dir"COPYING*; do
            [ -f "$file" ] || continue
            printf '\n\n==== %s: %s ====\n\n' "$name" "$(basename -- "$file")"
            cat -- "$file"
        done
    done
} > "$notices"
grep -q '==== swift-nio: LICENSE' "$notices" || die "no licences under ${HERALD_CHECKOUTS:-.build/checkouts} (build first)"

# 1. The tarball.
name=herald-$version-linux-$arch
tree=$stage/$name
mkdir -p -- "$tree"
install -m 0755 -- "$bin" "$tree/herald"
(cd -- "$tree" && sha256sum herald > herald.sha256)
while IFS= read -r file; do
    install -D -m 0644 -- "$file" "$tree/$file"
done < <(tracked schemas deploy | grep -v '^deploy/dev/\|^deploy/dist/')
find "$tree/deploy" -name '*.sh' -exec chmod 0755 {} +
install -m 0644 -- LICENSE NOTICE README.md CHANGELOG.md "$notices" "$tree/"
mkdir -p -- "$DIST"
tarball=$DIST/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$stage" -cf - "$name" | gzip -n -9 > "$tarball"

# 2. The Debian package.
deb=$stage/deb
install -D -m 0755 -- "$bin" "$deb/usr/bin/herald"
for file in $(tracked schemas); do install -D -m 0644 -- "$file" "$deb/usr/share/herald/$file"; done
for unit in herald.target herald-migrate.service herald-api.service herald-worker@.service; do
    install -d -- "$deb/lib/systemd/system"
    sed 's#/usr/local/bin/herald#/usr/bin/herald#g' "deploy/systemd/$unit" > "$deb/lib/systemd/system/$unit"
done
grep -q /usr/local/ "$deb"/lib/systemd/system/* && die "a unit still names /usr/local"
# The environment files hold passwords: 0640 from the start, root:herald once postinst has made the group.
conffiles=()
for env in herald worker api; do
    install -D -m 0640 -- "deploy/systemd/$env.env.example" "$deb/etc/herald/$env.env"
    conffiles+=("/etc/herald/$env.env")
done
doc=$deb/usr/share/doc/herald
install -d -- "$doc/examples"
install -m 0644 -- README.md CHANGELOG.md NOTICE "$notices" "$doc/"
install -m 0644 -- deploy/systemd/Caddyfile deploy/compose/apps.json "$doc/examples/"
{
    echo "Herald"
    echo "Copyright 2026 The Herald authors"
    echo "License: Apache-2.0 (/usr/share/common-licenses/Apache-2.0)"
    echo
    echo "The third-party software linked into /usr/bin/herald, with each licence: NOTICE and THIRD-PARTY-NOTICES"
    echo "in this directory."
} > "$doc/copyright"

# Depends: the libraries the binary links, each mapped to its package and minimal version by dpkg-shlibdeps, plus
# what the maintainer scripts and TLS need.
shlibs=$(
    scratch=$(mktemp -d)
    trap 'rm -rf -- "$scratch"' EXIT
    mkdir -p "$scratch/debian"
    printf 'Source: herald\n\nPackage: herald\nArchitecture: any\n' > "$scratch/debian/control"
    cd "$scratch" && dpkg-shlibdeps -O "-e$deb/usr/bin/herald" 2>"$stage/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p'
)
[ -n "$shlibs" ] || { cat "$stage/shlibdeps.log" >&2; die "dpkg-shlibdeps found no libraries"; }
install -d -m 0755 -- "$deb/DEBIAN"
cat > "$deb/DEBIAN/control" <<CONTROL
Package: herald
Version: $version
Architecture: $debarch
Maintainer: $DEB_MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$deb" | cut -f1)
Depends: $shlibs, ca-certificates, passwd
Recommends: tzdata
Section: net
Priority: optional
Description: push-notification delivery pipeline for Apple devices
 Herald takes notification jobs from RabbitMQ, resolves their devices in
 PostgreSQL and delivers them to APNs over HTTP/2, recording every outcome.
 One executable for every role: herald worker, herald api, herald migrate,
 herald doctor. systemd units (herald.target, herald-worker@PORT.service,
 herald-api.service, herald-migrate.service) are installed but not enabled:
 fill in /etc/herald/*.env first.
CONTROL
printf '%s\n' "${conffiles[@]}" > "$deb/DEBIAN/conffiles"
for script in postinst prerm postrm; do install -m 0755 -- "deploy/dist/debian/$script" "$deb/DEBIAN/$script"; done
package=$DIST/herald_${version}_$debarch.deb
dpkg-deb --root-owner-group -Zxz --build "$deb" "$package" >/dev/null

(cd -- "$DIST" && sha256sum "$(basename -- "$tarball")" > "$(basename -- "$tarball").sha256" &&
    sha256sum "$(basename -- "$package")" > "$(basename -- "$package").sha256")
rm -rf -- "$stage"
echo "dist.sh: $tarball"
echo "dist.sh: $package (Depends: $shlibs, ca-certificates, passwd)"
