#!/usr/bin/env bash
# System packages zrunbook needs on a fresh Debian 12/13 or Ubuntu 24.04 machine, as root:
# Python venv, Graphviz, TeX for the PDF, poppler for looking at PDF pages, Chromium for browser
# tests, and (through hosts-prereqs.sh) the container engine, debootstrap and qemu-user for the hosts.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "Run this as root (sudo .ci/prereqs.sh): it installs Debian packages." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
packages=(
  python3 python3-venv make git graphviz poppler-utils
  latexmk texlive-xetex texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended
  fonts-dejavu-core fonts-freefont-otf tex-gyre xindy
  chromium
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

here=$(dirname "$0")
if [[ -f $here/hosts-prereqs.sh ]]; then
  bash "$here/hosts-prereqs.sh"
fi
