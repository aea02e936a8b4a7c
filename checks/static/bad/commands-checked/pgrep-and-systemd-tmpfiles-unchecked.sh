#!/usr/bin/env bash
# negates: **/*.sh
# checker: commands-checked
# rejects: pgrep is not on a minimal system and the script calls
# The crypto page's slot daemon step as a reader met it on a clean Debian 13 (issue 17): pgrep and
# systemd-tmpfiles called without a check, so the step ended in "command not found" (exit 127).
set -euo pipefail
if ! pgrep -x pkcsslotd >/dev/null; then
  systemd-tmpfiles --create /usr/lib/tmpfiles.d/opencryptoki.conf
  pkcsslotd
fi
echo "pkcsslotd is running"
