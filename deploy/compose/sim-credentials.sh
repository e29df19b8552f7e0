#!/usr/bin/env bash
# Writes throwaway credentials for trying the compose stack with the APNs simulator (`--profile sim`) into
# deploy/compose/secrets/ (git-ignored): a CA, a server certificate for the host name apns-sim, and a provider key
# AuthKey_COMPOSEKEY.p8 that the simulator accepts and apps.json signs with. Existing files are kept.
set -euo pipefail
DIR=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)/secrets
mkdir -p "$DIR"
cd "$DIR"
umask 077
[ -s ca.pem ] && [ -s server.pem ] && [ -s AuthKey_COMPOSEKEY.p8 ] && exit 0
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key
openssl req -x509 -new -sha256 -days 825 -key ca.key -subj "/CN=Herald Compose Test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out ca.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key
openssl req -new -key server.key -subj "/CN=apns-sim" -out server.csr
printf 'subjectAltName=DNS:apns-sim,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -sha256 -days 825 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile server.ext \
    -out server.pem
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out AuthKey_COMPOSEKEY.p8
# The containers run as uid 10001 (see deploy/Dockerfile): let them read the files.
chmod 644 ca.pem server.pem server.key AuthKey_COMPOSEKEY.p8
echo "compose credentials in $DIR"
