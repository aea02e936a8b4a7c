#!/usr/bin/env bash
# Check that the crypto stack is installed: the openCryptoki tools and daemon, an openCryptoki token
# library (ICA on IBM Z, soft elsewhere), and on s390x libica's icainfo/icastats and lszcrypt.
# Prints what it found; exits 1 naming what is missing. Needs no root.
set -euo pipefail

missing=()
need_cmd() {
  if command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 ]]; then
    echo "found command $1"
  else
    missing+=("command $1 ($2)")
  fi
}

need_cmd pkcsconf "openCryptoki"
need_cmd pkcsslotd "openCryptoki"

if [[ $(uname -m) == s390x ]]; then
  token_lib=libpkcs11_ica.so
  need_cmd icainfo "libica tools: libica-utils, libica-tools or libica"
  need_cmd icastats "libica tools: libica-utils, libica-tools or libica"
  need_cmd lszcrypt "s390-tools or s390utils-base"
else
  token_lib=libpkcs11_sw.so
  echo "not IBM Z ($(uname -m)): looking for the soft token instead of the ICA token"
fi

lib=$(find /usr/lib /usr/lib64 -name "$token_lib*" -path '*opencryptoki*' 2>/dev/null | head -n 1 || true)
if [[ -n $lib ]]; then
  echo "found token library $lib"
else
  missing+=("token library $token_lib (openCryptoki's token package)")
fi

if ((${#missing[@]})); then
  printf 'missing: %s\n' "${missing[@]}" >&2
  echo "Install the missing packages with the install snippet for your distribution, then run this again." >&2
  exit 1
fi
echo "crypto stack installed"
