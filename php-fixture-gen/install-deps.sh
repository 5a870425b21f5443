#!/usr/bin/env bash
# Installs and starts what the tests run against: Debian's PHP 8.2 with Laravel 8.83's queue
# components, a Redis server on 127.0.0.1:6379, MariaDB and PostgreSQL (failed jobs, batches), and
# Debian's chromium, the browser playwright-core drives in the dashboard's tests (test/e2e/dashboard.test.ts).
# Safe to run again: it only does what is missing, and needs root (or sudo) only for that.
set -euo pipefail

packages=(php-cli php-redis php-sqlite3 php-mbstring php-illuminate-queue php-illuminate-redis php-illuminate-events
  php-illuminate-bus php-illuminate-database php-illuminate-encryption php-illuminate-notifications php-illuminate-mail php-laravel-framework php-mysql php-pgsql
  redis-server redis-tools mariadb-server postgresql openssl gcc libc6-dev chromium)

# Root runs commands as they are; anyone else through sudo, when there is one.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else return 1
  fi
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if ! as_root true 2>/dev/null; then
    echo "install-deps: these Debian packages are missing and installing them needs root or sudo: ${missing[*]}" >&2
    exit 1
  fi
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no --dir /tmp
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

# MariaDB and PostgreSQL hold failed_jobs in some tests: start whichever is not answering (that
# takes root), and make sure the `test` database and passwordless root/trust access are there.
if ! mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1 && as_root true 2>/dev/null; then
  echo "starting mariadbd"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld 2>/dev/null || true
  as_root start-stop-daemon --start --oknodo --background --chuid mysql --exec /usr/sbin/mariadbd || true
  for _ in $(seq 1 100); do mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
if mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1; then
  mysql -uroot -h127.0.0.1 -e 'CREATE DATABASE IF NOT EXISTS test' 2>/dev/null \
    || as_root mysql -uroot -e "CREATE DATABASE IF NOT EXISTS test; ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD(''); FLUSH PRIVILEGES;" 2>/dev/null || true
fi
if ! pg_isready -h 127.0.0.1 -q 2>/dev/null && as_root true 2>/dev/null; then
  echo "starting postgresql"
  version=$(ls /etc/postgresql | head -1)
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  for _ in $(seq 1 100); do pg_isready -h 127.0.0.1 -q && break; sleep 0.2; done
fi
if pg_isready -h 127.0.0.1 -q 2>/dev/null && ! psql -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1 && as_root true 2>/dev/null; then
  # Trust on the loopback, as the tests connect without a password, and a `test` database.
  version=$(ls /etc/postgresql | head -1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main reload || true
  as_root su postgres -c "psql -tc \"SELECT 1 FROM pg_database WHERE datname='test'\" | grep -q 1 || createdb test" || true
fi

php --version | head -1
redis-cli -h 127.0.0.1 -p 6379 ping
