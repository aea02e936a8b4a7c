#!/usr/bin/env bash
# On a machine with PyPI access: downloads everything the verify tool's wheel needs, and pip, into a folder (a
# wheelhouse) for install-verify-tool.sh on a machine without PyPI access. The wheels must fit the machine that
# installs: give its Python version and its glibc as a manylinux tag when they differ from this machine's (Debian 13
# on x86_64: 3.13 manylinux_2_41_x86_64, from `python3 -V` and `ldd --version`; wheels for older glibc versions fit too):
#   bash install-verify-tool-wheelhouse.sh ./zrunbook-0.1.0-py3-none-any.whl wheelhouse [3.13 manylinux_2_41_x86_64]
# Then copy the wheel, its .sha256 and the folder across. Only wheels are taken, none built from sources.
set -euo pipefail

die() { echo "install-verify-tool-wheelhouse: $*" >&2; exit 1; }
(($# == 2 || $# == 4)) || die "usage: $0 WHEEL FOLDER [PYTHON_VERSION PLATFORM] (for another machine, e.g. 3.13 manylinux_2_41_x86_64)"
wheel=$1
dest=$2
[[ $(basename "$wheel") == zrunbook-*.whl && -f $wheel ]] || die "$wheel is not the tool's wheel: download zrunbook-...whl from the guide's downloads."
command -v python3 >/dev/null || die "python3 is missing: install python3."
target=()
if (($# == 4)); then
  [[ $3 =~ ^3\.[0-9]+$ ]] || die "'$3' is not a Python version such as 3.13."
  [[ $4 =~ ^manylinux_2_([0-9]+)_([a-z0-9_]+)$ ]] || die "'$4' is not a platform tag such as manylinux_2_41_x86_64."
  target=(--python-version "$3")
  # pip takes only the tags it is given: every glibc from the machine's down to manylinux's oldest, 2.17
  for ((glibc = BASH_REMATCH[1]; glibc >= 17; glibc--)); do
    target+=(--platform "manylinux_2_${glibc}_${BASH_REMATCH[2]}")
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv" || die "python3 -m venv failed: install python3-venv."
mkdir -p "$dest"
"$tmp/venv/bin/pip" download --quiet --only-binary=:all: "${target[@]}" --dest "$dest" pip "$wheel" \
  || die "pip could not download the tool's dependencies from PyPI (see its message above)."
echo "$(find "$dest" -maxdepth 1 -name '*.whl' | wc -l) wheels in $dest: copy it with the wheel and its .sha256."
