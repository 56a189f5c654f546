#!/usr/bin/env bash
# Installs Debian's Chromium, which the browser tests drive through playwright-core
# (test/browser.ts launches /usr/bin/chromium). Playwright's own browser download is never used:
# the tests must not fetch a browser at install time. A no-op when Chromium is already installed.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

$sudo_cmd apt-get update -qq
$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
echo "chromium: installed $(/usr/bin/chromium --version)"
