#!/usr/bin/env bash
# Installs dist/herald_VERSION_ARCH.deb with apt as an operator would (`apt install ./herald_*.deb`, which also
# installs its Depends), checks what it installed, and removes it again (purge). Run by .ci/run after `make dist`;
# needs root (or sudo -n). It refuses to run where a herald package is already installed, so it never replaces a
# real installation.
#
#   deploy/dist/check-deb.sh [dist/herald_VERSION_ARCH.deb]
#   deploy/dist/check-deb.sh --bare DIR [dist/herald_VERSION_ARCH.deb]
#
# --bare does the same inside DIR, a minimal Debian 12 (debootstrap --variant=minbase bookworm, made there first if
# DIR is empty): a machine with none of the libraries herald links, so a missing Depends fails the install or ldd.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/../.." && pwd)
die() { echo "check-deb.sh: $*" >&2; exit 1; }

if [ "${1:-}" = --bare ]; then
    [ $# -ge 2 ] || die "--bare needs a directory"
    bare=$(readlink -f -- "$2")
    shift 2
    [ "$(id -u)" -eq 0 ] || die "--bare needs root (debootstrap, chroot)"
    if [ ! -x "$bare/usr/bin/apt-get" ]; then
        if ! command -v debootstrap >/dev/null 2>&1; then
            (env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
                env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap) >/dev/null
        fi
        echo "== debootstrap --variant=minbase bookworm $bare"
        mkdir -p -- "$bare"
        debootstrap --variant=minbase bookworm "$bare" http://deb.debian.org/debian >"$bare.debootstrap.log" 2>&1 ||
            { tail -n 20 "$bare.debootstrap.log" >&2; die "debootstrap failed (log: $bare.debootstrap.log)"; }
    fi
    shopt -s nullglob
    candidates=("${1:-}")
    [ -n "${1:-}" ] || candidates=("$ROOT"/dist/herald_*.deb)
    [ ${#candidates[@]} -eq 1 ] && [ -f "${candidates[0]}" ] || die "expected one dist/herald_*.deb: run make dist"
    install -m 0644 -- "${candidates[0]}" "$bare/tmp/herald.deb"
    install -m 0755 -- "${BASH_SOURCE[0]}" "$bare/tmp/check-deb.sh"
    cp -- /etc/resolv.conf "$bare/etc/resolv.conf"
    mountpoint -q "$bare/proc" || mount -t proc proc "$bare/proc"
    # Whatever happens, what the package pulled in goes too, so that DIR is bare again for the next run.
    bare_cleanup() {
        chroot "$bare" env DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y -q -o Dpkg::Use-Pty=0 \
            -o APT::AutoRemove::RecommendsImportant=false -o APT::AutoRemove::SuggestsImportant=false \
            >/dev/null 2>&1 || true
        umount "$bare/proc" 2>/dev/null || true
    }
    trap bare_cleanup EXIT
    echo "== in $bare: apt-get update"
    chroot "$bare" env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    chroot "$bare" /tmp/check-deb.sh /tmp/herald.deb
    exit 0
fi

package=${1:-}
if [ -z "$package" ]; then
    shopt -s nullglob
    candidates=("$ROOT"/dist/herald_*.deb)
    [ ${#candidates[@]} -eq 1 ] || die "expected one dist/herald_*.deb, found ${#candidates[@]}: run make dist"
    package=${candidates[0]}
fi
package=$(readlink -f -- "$package")
version=$(dpkg-deb --field "$package" Version)

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "needs root or sudo to install a package"
    sudo=(sudo -n)
fi
if dpkg-query -W -f='${Status}' herald 2>/dev/null | grep -q 'install ok'; then
    die "a herald package is installed already; not touching it"
fi

purge() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q herald >/dev/null || true; }
trap purge EXIT

echo "== apt-get install $package"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "$package"

echo "== what it installed"
[ "$(command -v herald)" = /usr/bin/herald ] || die "herald is not /usr/bin/herald"
if ldd /usr/bin/herald | grep 'not found'; then die "a library herald links is not installed (Depends)"; fi
printed=$(herald --version)
echo "herald --version: $printed"
[[ $printed == "herald $version ("* ]] || die "herald --version does not print $version"
herald doctor --help | grep -q 'USAGE: herald doctor' || die "herald doctor --help printed no usage"
echo "herald doctor --help: usage printed"
getent passwd herald | grep -q ':/usr/sbin/nologin$' || die "no herald system user with a nologin shell"
[ "$(getent passwd herald | cut -d: -f3)" -lt 1000 ] || die "the herald user is not a system user"
for file in herald.env worker.env api.env; do
    [ "$(stat -c '%a %U:%G' "/etc/herald/$file")" = "640 root:herald" ] || die "/etc/herald/$file is not 0640 root:herald"
done
dpkg-query --control-show herald conffiles | grep -q '^/etc/herald/herald.env$' || die "herald.env is not a conffile"
[ -f /usr/share/herald/schemas/001_initial.sql ] || die "no schemas in /usr/share/herald/schemas"
for unit in herald.target herald-migrate.service herald-api.service herald-worker@.service; do
    [ -f "/lib/systemd/system/$unit" ] || die "no unit $unit"
done
grep -q '^ExecStart=/usr/bin/herald migrate --schemas /usr/share/herald/schemas$' \
    /lib/systemd/system/herald-migrate.service || die "herald-migrate.service does not run /usr/bin/herald"
if command -v systemd-analyze >/dev/null 2>&1; then
    systemd-analyze verify /lib/systemd/system/herald-api.service /lib/systemd/system/herald-migrate.service \
        /lib/systemd/system/herald-worker@9464.service /lib/systemd/system/herald.target
    echo "systemd-analyze verify: ok"
fi
echo "user, /etc/herald modes, conffiles, schemas, units: ok"

echo "== apt-get purge herald"
trap - EXIT
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q -o Dpkg::Use-Pty=0 herald
[ ! -e /usr/bin/herald ] || die "/usr/bin/herald is still there after the purge"
[ ! -e /etc/herald/herald.env ] || die "/etc/herald/herald.env is still there after the purge"
echo "check-deb.sh: herald $version installs, runs and purges"
