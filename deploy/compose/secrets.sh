#!/usr/bin/env bash
# Makes the compose stack's own secrets in deploy/compose/private/ (git-ignored; HERALD_COMPOSE_PRIVATE_DIR moves it):
#
#   secrets.env           the passwords of the broker users and of PostgreSQL, random, and the API's public host name
#                         and port (every variable of secrets.env.example). A value already there is kept; a missing
#                         or empty one is generated. Mode 0600. Pass it to compose:
#                           docker compose --env-file deploy/compose/private/secrets.env -f deploy/compose.yaml up -d
#   rabbitmq-users.json   rabbitmq-users.template.json with each password hashed as RabbitMQ's definitions expect
#                         (rabbit_password_hashing_sha256: base64(salt + sha256(salt + password)), a random 4-byte
#                         salt); rewritten on every run. RabbitMQ loads it at boot: after changing a password here,
#                         `docker compose … restart rabbitmq`, then `up -d` to give the services their new URLs.
#   tls/cert.pem, key.pem a self-signed certificate for API_HOSTNAME, made only if tls/ holds none: for trials. In
#                         production put the certificate (full chain) and key for your host name there instead.
#
# PostgreSQL takes POSTGRES_PASSWORD only when its volume is first initialised; to change it later, run
# ALTER ROLE herald PASSWORD '…' in the database as well. The generated passwords are hex, so they need no escaping
# in the URLs compose builds from them; a password of your own must be URL-safe too.
set -euo pipefail
HERE=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")" && pwd -P)
DIR=${HERALD_COMPOSE_PRIVATE_DIR:-$HERE/private}
ENV_FILE=$DIR/secrets.env
umask 077
mkdir -p "$DIR/tls"
chmod 700 "$DIR" "$DIR/tls"
touch "$ENV_FILE"
chmod 600 "$ENV_FILE"

# The value of NAME in the env file ("" if absent).
value() { sed -n "s/^$1=//p" "$ENV_FILE" | tail -n 1; }

# Sets NAME to DEFAULT in the env file unless it already has a value.
ensure() {
    local name=$1 default=$2
    [ -n "$(value "$name")" ] && return 0
    sed -i "/^$name=/d" "$ENV_FILE"
    printf '%s=%s\n' "$name" "$default" >>"$ENV_FILE"
}

random_password() { openssl rand -hex 24; }

ensure AMQP_WORKER_PASSWORD "$(random_password)"
ensure AMQP_API_PASSWORD "$(random_password)"
ensure AMQP_ADMIN_PASSWORD "$(random_password)"
ensure POSTGRES_PASSWORD "$(random_password)"
ensure API_HOSTNAME localhost
ensure API_HTTPS_PORT 8443

# rabbit_password_hashing_sha256 of $1: base64(salt ++ sha256(salt ++ utf8 password)), salt = 4 random bytes.
rabbit_hash() {
    local salt_hex salt
    salt_hex=$(openssl rand -hex 4)
    salt=$(sed 's/../\\x&/g' <<<"$salt_hex")
    {
        printf '%b' "$salt"
        { printf '%b' "$salt" && printf '%s' "$1"; } | openssl dgst -sha256 -binary
    } | openssl base64 -A
}

# The template names each password as @VARIABLE@; every one must have a value.
users=$(cat "$HERE/rabbitmq-users.template.json")
for name in $(grep -o '@[A-Z_]*@' "$HERE/rabbitmq-users.template.json" | tr -d @ | sort -u); do
    password=$(value "$name")
    [ -n "$password" ] || { echo "secrets.sh: $name has no value in $ENV_FILE" >&2; exit 1; }
    users=${users//@$name@/$(rabbit_hash "$password")}
done
# RabbitMQ reads it as its own user (uid 999 in its image), not as yours: the hashes are salted and the
# passwords random, and the directory above stays 0700.
printf '%s\n' "$users" >"$DIR/rabbitmq-users.json"
chmod 644 "$DIR/rabbitmq-users.json"

if [ ! -s "$DIR/tls/cert.pem" ] || [ ! -s "$DIR/tls/key.pem" ]; then
    host=$(value API_HOSTNAME)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -sha256 -days 90 -nodes \
        -subj "/CN=$host" -addext "subjectAltName=DNS:$host" \
        -keyout "$DIR/tls/key.pem" -out "$DIR/tls/cert.pem" 2>/dev/null
    echo "self-signed certificate for $host in $DIR/tls (replace it with your own for production)"
fi
echo "compose secrets in $DIR: start with docker compose --env-file $ENV_FILE -f $(dirname "$HERE")/compose.yaml up -d"
