#!/usr/bin/env bash
# Runs `herald demo` against the dev services (see services.sh), with
# throwaway TLS material generated under .state/demo/ on first use:
#   ca.pem / ca.key             test CA (EC P-256, 10 years)
#   server.pem / server.key     server cert for 127.0.0.1 + localhost, signed by the CA
#   AuthKey_DEMOKEY123.p8       APNs-style provider key (PKCS#8 PEM, P-256)
# Existing files are kept, so repeated runs use the same CA and key.
#
# Usage: deploy/dev/demo.sh [extra args for `herald demo`]
# Normally run via `make demo`, which builds the herald binary first.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)
SERVICES=$SCRIPT_DIR/services.sh
DEMO_DIR_REL=.state/demo
DEMO_DIR=$REPO_ROOT/$DEMO_DIR_REL
KEY_ID=DEMOKEY123

log() { printf 'demo: %s\n' "$*" >&2; }
die() {
    printf 'demo: error: %s\n' "$*" >&2
    exit 1
}

command -v openssl >/dev/null 2>&1 || die "openssl not found (run 'make services-up', which installs it)"
cd "$REPO_ROOT"

# Services: start them if needed (idempotent, ~1s when already up), then
# export HERALD_AMQP_URL / HERALD_DATABASE_URL for herald.
if ! "$SERVICES" status >/dev/null 2>&1; then
    "$SERVICES" up
fi
set -a
eval "$("$SERVICES" env)"
set +a

mkdir -p "$DEMO_DIR"
# Private keys are created mode 600.
umask 077

# Each file is written to a temp name and renamed, so an interrupted run
# never leaves a truncated key or certificate that later runs would trust.
new_p256_key() { # $1 = destination
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.tmp"
    mv -f -- "$1.tmp" "$1"
}

if [ ! -s "$DEMO_DIR/ca.key" ] || [ ! -s "$DEMO_DIR/ca.pem" ]; then
    log "creating test CA in $DEMO_DIR_REL"
    new_p256_key "$DEMO_DIR/ca.key"
    openssl req -x509 -new -sha256 -days 3650 -key "$DEMO_DIR/ca.key" \
        -subj "/O=Herald Dev/CN=Herald Dev Test CA" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -addext "subjectKeyIdentifier=hash" \
        -out "$DEMO_DIR/ca.pem.tmp"
    mv -f -- "$DEMO_DIR/ca.pem.tmp" "$DEMO_DIR/ca.pem"
    # A new CA invalidates any server certificate signed by the old one.
    rm -f -- "$DEMO_DIR/server.pem"
fi

# Also regenerate the server certificate when it doesn't chain to our CA.
if [ -s "$DEMO_DIR/server.pem" ] &&
    ! openssl verify -CAfile "$DEMO_DIR/ca.pem" "$DEMO_DIR/server.pem" >/dev/null 2>&1; then
    log "server certificate does not verify against ca.pem (or expired); regenerating"
    rm -f -- "$DEMO_DIR/server.pem"
fi

if [ ! -s "$DEMO_DIR/server.key" ] || [ ! -s "$DEMO_DIR/server.pem" ]; then
    log "creating server certificate for 127.0.0.1/localhost in $DEMO_DIR_REL"
    [ -s "$DEMO_DIR/server.key" ] || new_p256_key "$DEMO_DIR/server.key"
    ext=$(mktemp)
    csr=$(mktemp)
    trap 'rm -f -- "$ext" "$csr"' EXIT
    cat >"$ext" <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
    openssl req -new -sha256 -key "$DEMO_DIR/server.key" -subj "/O=Herald Dev/CN=localhost" -out "$csr"
    openssl x509 -req -sha256 -days 3650 -in "$csr" -CA "$DEMO_DIR/ca.pem" -CAkey "$DEMO_DIR/ca.key" \
        -set_serial "0x$(openssl rand -hex 16)" -extfile "$ext" -out "$DEMO_DIR/server.pem.tmp" 2>/dev/null
    mv -f -- "$DEMO_DIR/server.pem.tmp" "$DEMO_DIR/server.pem"
fi

if [ ! -s "$DEMO_DIR/AuthKey_$KEY_ID.p8" ]; then
    log "creating provider key AuthKey_$KEY_ID.p8"
    # genpkey writes PKCS#8 ("BEGIN PRIVATE KEY"), the format of Apple's .p8 files.
    new_p256_key "$DEMO_DIR/AuthKey_$KEY_ID.p8"
fi

BIN_DIR=$(swift build --show-bin-path)
HERALD=$BIN_DIR/herald
[ -x "$HERALD" ] || die "$HERALD not found; build it first: swift build --product herald"

log "running: herald demo --state-dir $DEMO_DIR_REL $*"
exec "$HERALD" demo --state-dir "$DEMO_DIR_REL" "$@"
