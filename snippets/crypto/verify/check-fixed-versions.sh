#!/usr/bin/env bash
# Check that each installed package is at least the fixed version of its advisory on this distribution.
# Arguments: triples CVE PACKAGE FIXED-VERSION, from this distribution's rows of the fixed-versions table;
# FIXED-VERSION "none" means no fixed package is known here, which fails. Read-only; any user may run it.
set -euo pipefail

if (($# == 0 || $# % 3 != 0)); then
  echo "Give triples: CVE PACKAGE FIXED-VERSION (from your distribution's rows of the table)." >&2
  exit 2
fi

if command -v dpkg-query >/dev/null; then
  installed() { { dpkg-query -W -f='${db:Status-Status} ${Version}' "$1" 2>/dev/null || true; } | sed -n 's/^installed //p'; }
  at_least() { dpkg --compare-versions "$1" ge "$2"; }
elif command -v rpm >/dev/null; then
  installed() { { rpm -q --qf '%{EPOCHNUM}:%{VERSION}-%{RELEASE}\n' "$1" 2>/dev/null || true; } | sed '/not installed/d' | sort -V | tail -n 1; }
  at_least() {
    local min=$2
    [[ $min == *:* ]] || min="0:$min"
    [[ $(rpm --eval "%{lua: print(rpm.vercmp('$1', '$min'))}") -ge 0 ]]
  }
else
  echo "Neither dpkg-query nor rpm is here: this check reads the package database of Debian, Ubuntu, RHEL or SLES." >&2
  exit 2
fi

failed=0
while (($#)); do
  cve=$1 package=$2 fixed=$3
  shift 3
  have=$(installed "$package")
  if [[ -z $have ]]; then
    echo "$cve: $package is not installed, so it is not exposed to $cve."
  elif [[ $fixed == none ]]; then
    echo "$cve: $package $have is installed and no fixed package is known for this distribution." >&2
    failed=1
  elif at_least "$have" "$fixed"; then
    echo "$cve: $package $have is at or above the fixed version $fixed."
  else
    echo "$cve: $package $have is older than the fixed version $fixed: update it." >&2
    failed=1
  fi
done
if ((failed)); then
  echo "Some packages are not at a level that fixes their advisories (above)." >&2
  exit 1
fi
echo "Every package checked is at or above its fixed version."
