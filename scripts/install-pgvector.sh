#!/usr/bin/env bash
# Installs the pgvector extension into the local PostgreSQL server (Debian 12).
# Debian 12 has no pgvector binary package; Debian's trixie suite has its source
# package (0.8.x), which builds in seconds against postgresql-server-dev-NN.
# A no-op when the extension is already installed.
set -euo pipefail

pg_major="${PG_MAJOR:-$(pg_config --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/' || true)}"
if [ -z "$pg_major" ]; then
  pg_major="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
fi
ext_dir="/usr/share/postgresql/${pg_major}/extension"
if [ -f "${ext_dir}/vector.control" ]; then
  echo "pgvector: already installed for PostgreSQL ${pg_major}"
  exit 0
fi

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

src_list=/etc/apt/sources.list.d/lore-trixie-src.sources
if [ ! -f "$src_list" ]; then
  $sudo_cmd tee "$src_list" >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

$sudo_cmd apt-get update -qq
$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  "postgresql-server-dev-${pg_major}" build-essential dpkg-dev >/dev/null

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
apt-get source -qq pgvector >/dev/null
cd pgvector-*/
make -s PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" >/dev/null
$sudo_cmd make -s install PG_CONFIG="/usr/lib/postgresql/${pg_major}/bin/pg_config" >/dev/null
echo "pgvector: installed $(grep default_version "${ext_dir}/vector.control") for PostgreSQL ${pg_major}"
