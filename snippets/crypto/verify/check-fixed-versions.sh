#!/usr/bin/env bash
# Check that each installed package is at least the fixed version of its advisory on this distribution.
# Arguments: quadruples RELEASE CVE PACKAGE FIXED-VERSION, the rows of the fixed-versions table; RELEASE is
# "ID VERSION_ID" from /etc/os-release ("debian 13"; "rhel 9" also matches 9.6). Rows of other releases are
# skipped. FIXED-VERSION "none" means the release is affected and has no fixed package, which fails; "not affected"
# means its package predates the affected code (the table's source says why), which passes. Read-only; any user.
# Exit status: 0 every advisory fixed or not affected; 1 a package to update (or an advisory with no fix);
# 2 bad arguments; 5 cannot tell (the table confirms nothing for this release: read its advisories yourself).
set -euo pipefail

if (($# == 0 || $# % 4 != 0)); then
  echo "Give quadruples: RELEASE CVE PACKAGE FIXED-VERSION (the rows of the fixed-versions table)." >&2
  exit 2
fi
[[ -r /etc/os-release ]] || { echo "/etc/os-release is missing: this check cannot tell the distribution." >&2; exit 2; }
# shellcheck disable=SC1091
release=$(. /etc/os-release && echo "${ID:-} ${VERSION_ID:-}")

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

rows=0 failed=0
while (($#)); do
  for_release=$1 cve=$2 package=$3 fixed=$4
  shift 4
  [[ $release == "$for_release" || $release == "$for_release".* ]] || continue
  rows=$((rows + 1))
  have=$(installed "$package")
  if [[ -z $have ]]; then
    echo "$cve: $package is not installed, so it is not exposed to $cve."
  elif [[ $fixed == "not affected" ]]; then
    echo "$cve: $package $have is not affected: $release's package predates the affected versions."
  elif [[ $fixed == none ]]; then
    echo "$cve: $package $have is installed and $release has no fixed package for it." >&2
    failed=1
  elif at_least "$have" "$fixed"; then
    echo "$cve: $package $have is at or above the fixed version $fixed."
  else
    echo "$cve: $package $have is older than the fixed version $fixed: update it." >&2
    failed=1
  fi
done
if ((rows == 0)); then
  echo "Cannot tell: the table confirms no fixed versions for $release. Check your distribution's advisories for" \
    "the table's CVEs yourself." >&2
  exit 5
fi
if ((failed)); then
  echo "Some packages are not at a level that fixes their advisories (above)." >&2
  exit 1
fi
echo "Every package checked is at or above its fixed version."
