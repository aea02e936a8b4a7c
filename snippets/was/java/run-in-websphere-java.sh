#!/usr/bin/env bash
# Runs print-max-aes-key-length.py in WebSphere's own Java through wsadmin, without a running server.
# Environment: WAS_HOME (default /opt/IBM/WebSphere/AppServer). Run as the WebSphere user from this directory.
set -euo pipefail

was_home="${WAS_HOME:-/opt/IBM/WebSphere/AppServer}"
script="$(dirname "$0")/print-max-aes-key-length.py"

if [[ ! -x "$was_home/bin/wsadmin.sh" ]]; then
  echo "No wsadmin.sh in $was_home/bin: set WAS_HOME to the WebSphere installation directory." >&2
  exit 1
fi
if [[ ! -r "$script" ]]; then
  echo "print-max-aes-key-length.py is not next to this script: download both into one directory." >&2
  exit 1
fi
"$was_home/bin/wsadmin.sh" -lang jython -conntype NONE -f "$script" | grep -E 'JCE policy'
