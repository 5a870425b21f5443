#!/usr/bin/env bash
# Installs and starts what the tests run against: Debian's PHP 8.2 with Laravel 8.83's queue
# components, and a Redis server on 127.0.0.1:6379. Safe to run again: it only does what is missing.
set -euo pipefail

packages=(php-cli php-redis php-sqlite3 php-mbstring php-illuminate-queue php-illuminate-redis php-illuminate-events
  php-illuminate-bus php-illuminate-database php-illuminate-encryption php-illuminate-notifications php-illuminate-mail php-laravel-framework php-mysql php-pgsql
  redis-server redis-tools)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no --dir /tmp
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

# MariaDB and PostgreSQL hold failed_jobs in some tests. Machines of this kind have both
# installed; start whichever is not answering.
if command -v mariadbd >/dev/null 2>&1 && ! mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1; then
  echo "starting mariadbd"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  for _ in $(seq 1 100); do mysqladmin -uroot -h127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.2; done
fi
if command -v pg_ctlcluster >/dev/null 2>&1 && ! pg_isready -h 127.0.0.1 -q 2>/dev/null; then
  echo "starting postgresql"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  for _ in $(seq 1 100); do pg_isready -h 127.0.0.1 -q && break; sleep 0.2; done
fi

php --version | head -1
redis-cli -h 127.0.0.1 -p 6379 ping
