#!/usr/bin/env bash
# Checks that the libraries a Db2 server loads can be found by their names: libaio.so.1, libstdc++.so.6, libpam.so.0.
# Any distribution, any user; prints one 'missing:' line per library not found and exits 1.
set -euo pipefail
missing=0
for lib in libaio.so.1 libstdc++.so.6 libpam.so.0; do
  found=
  for dir in /lib64 /usr/lib64 /lib /usr/lib /lib/*-linux-gnu /usr/lib/*-linux-gnu; do
    if [ -e "$dir/$lib" ]; then found=$dir/$lib; break; fi
  done
  if [ -n "$found" ]; then echo "found: $found"; else echo "missing: $lib" >&2; missing=1; fi
done
[ "$missing" -eq 0 ] || { echo "install the packages of step 1, then run this again" >&2; exit 1; }
echo "Db2 prerequisites installed"
