#!/bin/bash
# Scratch build of pkcs11-provider for the token-settings bench (issue 46, item 3); never a reader's step.
# Runs in a throwaway container of the amd64 host image: /src/<name>.tar are `git archive` trees, /src/*.patch
# the patches a name ends in (<version>+<patch-stem>), /out/<name>/pkcs11.so the result. The flags are Debian's
# (dpkg-buildflags, meson --buildtype=plain, as debhelper builds the package), so a scratch build of the
# version Debian ships can be measured beside Debian's own library and beside the patched one.
set -euo pipefail
[ -d /src ] && [ -d /out ] || { echo "build-pkcs11-provider.sh: mount the sources at /src and a folder for the libraries at /out" >&2; exit 2; }
# The host's apt sources are the lock's repository; a build takes its tools from Debian's mirror instead.
rm -rf /var/lib/apt/lists/*
printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie trixie-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
  > /etc/apt/sources.list.d/debian.sources
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc libc6-dev meson ninja-build pkgconf \
  libssl-dev dpkg-dev patch >/dev/null
eval "$(dpkg-buildflags --export=sh)"
for tar in /src/*.tar; do
  name=$(basename "$tar" .tar)
  rm -rf "/tmp/$name" && mkdir "/tmp/$name" && tar -xf "$tar" -C "/tmp/$name"
  case "$name" in
    *+*) patch -d "/tmp/$name" -p1 --quiet < "/src/${name#*+}.patch" ;;
  esac
  (cd "/tmp/$name" && meson setup --buildtype=plain -Db_lto=false _b >/dev/null && ninja -C _b >/dev/null)
  mkdir -p "/out/$name" && cp "/tmp/$name/_b/src/pkcs11.so" "/out/$name/pkcs11.so"
  echo "built $name: $(sha256sum "/out/$name/pkcs11.so" | cut -c1-16)"
done
