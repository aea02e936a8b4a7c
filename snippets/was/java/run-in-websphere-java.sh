#!/usr/bin/env bash
# Runs a Jython check script (print-max-aes-key-length.py, print-providers.py) in WebSphere's own Java.
# Usage: run-in-websphere-java.sh SCRIPT. Environment: WAS_HOME (default /opt/IBM/WebSphere/AppServer).
set -euo pipefail

was_home="${WAS_HOME:-/opt/IBM/WebSphere/AppServer}"
script="${1:-}"

if [[ -z "$script" || ! -r "$script" ]]; then
  echo "Name a readable check script, for example: $0 print-providers.py" >&2
  exit 2
fi
if [[ ! -x "$was_home/bin/wsadmin.sh" ]]; then
  echo "No wsadmin.sh in $was_home/bin: set WAS_HOME to the WebSphere installation directory." >&2
  exit 1
fi
# Local mode (-conntype NONE): no server needs to run. wsadmin's own WASX messages are left out.
"$was_home/bin/wsadmin.sh" -lang jython -conntype NONE -f "$script" | grep -v '^WASX'
