#!/usr/bin/env bash
# Installs the verify tool (the command zrunbook, with verify and doctor) from the wheel in this guide's downloads,
# into a Python virtual environment of its own, after checking the wheel's SHA-256. Run it as the user who will run
# verify, on the machine that reaches your hosts, with the wheel and its .sha256 file from the downloads side by side:
#   bash install-verify-tool.sh ./zrunbook-0.1.0-py3-none-any.whl [WHEELHOUSE]
# pip fetches what the tool needs (ansible-core, pytest, pytest-testinfra, ...) from PyPI. Without PyPI access, give
# a folder that install-verify-tool-wheelhouse.sh filled on a machine with it: then nothing is fetched. The
# environment goes to ZRUNBOOK_VENV (default ~/.local/share/zrunbook-verify); run the tool as
# $ZRUNBOOK_VENV/bin/zrunbook or put that folder on your PATH.
set -euo pipefail

die() { echo "install-verify-tool: $*" >&2; exit 1; }
(($# == 1 || $# == 2)) || die "usage: $0 WHEEL [WHEELHOUSE] (the wheel from the guide's downloads; a folder of its dependencies for a machine without PyPI)"
wheel=$1
wheelhouse=${2:-}
venv=${ZRUNBOOK_VENV:-$HOME/.local/share/zrunbook-verify}
name=$(basename "$wheel")
[[ $name == zrunbook-*.whl && -f $wheel ]] || die "$wheel is not the tool's wheel: download zrunbook-...whl from the guide's downloads."
[[ -f $wheel.sha256 ]] || die "$wheel.sha256 is missing: download it beside the wheel; it holds the SHA-256 the page shows."
command -v sha256sum >/dev/null || die "sha256sum is missing: install coreutils."
command -v python3 >/dev/null || die "python3 is missing: install python3 (3.11 or later)."
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || die "this python3 is $(python3 -c 'import platform; print(platform.python_version())'); the tool needs 3.11 or later."

# The check, before anything is installed: the .sha256 file must name this wheel, and the wheel must have that SHA-256.
read -r _ listed <"$wheel.sha256" || true
[[ $listed == "$name" ]] || die "$wheel.sha256 is for ${listed:-no file}, not $name: download the wheel's own .sha256."
(cd "$(dirname "$wheel")" && sha256sum --check --strict --quiet "$name.sha256") \
  || die "$name does not have the SHA-256 in $name.sha256: it is damaged or not the guide's; download both again, install nothing."

if [[ -n $wheelhouse ]]; then
  pip_wheel=$(find "$wheelhouse" -maxdepth 1 -name 'pip-*.whl' 2>/dev/null | sort -V | tail -n 1)
  [[ -n $pip_wheel ]] || die "$wheelhouse holds no pip wheel: fill it with install-verify-tool-wheelhouse.sh."
  # No pip from the system (Debian's python3-venv brings it): the wheelhouse's pip installs itself and the tool.
  python3 -m venv --without-pip "$venv" || die "python3 -m venv failed: install Python's venv module (python3-venv)."
  "$venv/bin/python" "$pip_wheel/pip" install --quiet --no-index --find-links "$wheelhouse" pip "$wheel" \
    || die "pip could not install $name from $wheelhouse alone: fill it again with install-verify-tool-wheelhouse.sh, for this machine's Python ($(python3 -c 'import platform; print(platform.python_version())'))."
else
  python3 -c 'import ensurepip' 2>/dev/null \
    || die "python3 has no venv with pip: install python3-venv (Debian, Ubuntu), or give a wheelhouse."
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "$wheel" || die "pip could not install $name: without PyPI access, give a wheelhouse."
fi
"$venv/bin/zrunbook" verify --help
echo "installed: $venv/bin/zrunbook (zrunbook verify and zrunbook doctor)"
