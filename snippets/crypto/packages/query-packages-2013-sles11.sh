#!/usr/bin/env bash
# 2013 study (SLES 11 SP2): list the installed openCryptoki and libica packages with rpm.
# The study shows openCryptoki 2.4 and libica 2.1; both are long out of support.
set -euo pipefail

command -v rpm >/dev/null || { echo "rpm is missing: this query is for SLES and RHEL (rpm-based); install rpm or use your distribution's tab." >&2; exit 1; }
rpm -qa | grep -E '^(openCryptoki|libica)' || {
  echo "Neither openCryptoki nor libica is installed: install them from the SLES 11 media." >&2
  exit 1
}
