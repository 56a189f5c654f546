#!/usr/bin/env bash
# Installs Debian's Chromium, which the browser tests drive through playwright-core
# (test/browser.ts launches /usr/bin/chromium), and a colour emoji font: the console and the widget
# show 👍/👎, which the pictures in docs/images/ (LORE_SCREENSHOTS=1) would otherwise draw as empty
# boxes. Playwright's own browser download is never used: the tests must not fetch a browser at
# install time. A no-op when both are already installed.
set -euo pipefail

emoji_font=/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
if [ -x /usr/bin/chromium ] && [ -f "$emoji_font" ]; then
  echo "chromium: already installed ($(/usr/bin/chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

$sudo_cmd apt-get update -qq
$sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null
echo "chromium: installed $(/usr/bin/chromium --version), with the Noto Color Emoji font"
