#!/usr/bin/env bash
# The system set-up zrunbook needs on a Debian 12/13 (or Ubuntu 24.04) machine: the one list, per purpose.
#   html   the HTML guide: Python's venv, make, Graphviz (sphinx.ext.graphviz draws the diagrams)
#   pdf    html + TeX: xelatex, latexmk, xindy and the fonts conf.py names
#   hosts  the container hosts: an engine that answers, debootstrap, qemu-user-static with binfmt_misc
#          (qemu-s390x, F flag), gpg/gpgv, debian-archive-keyring and xz-utils for the Debian mirror
#   verify make verify: html + the OpenSSH client (Ansible's inventory and pytest-testinfra come from PyPI)
#   check  everything (the checks build the guide and the PDF, open a browser and start the hosts, and run
#          make verify against them): pdf + hosts + verify + poppler-utils, Chromium, git
#
#   sudo bash .ci/prereqs.sh [PURPOSE]   install what is missing (default: check), start the engine when
#                                        none answers, enable qemu-s390x in binfmt_misc; safe to run again
#   bash .ci/prereqs.sh --probe PURPOSE  change nothing: print what is missing, one item a line, exit 1 if any
#   bash .ci/prereqs.sh --make PURPOSE [TARGET]
#                                        what make's targets run first (TARGET: the one to name again, default
#                                        PURPOSE): silent when nothing is missing; as root install it and go on;
#                                        otherwise one sentence naming the sudo command, and exit 1
#
# For the tests only: ZR_PREREQS_MISSING="pkg ..." counts these packages as missing; ZR_DAEMON_PATH is where
# dockerd is looked for (default: PATH, /usr/sbin, /usr/bin); ZR_PREREQS_NO_SYSTEMD=1 starts dockerd as on a
# machine without systemd.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

html_packages=(python3 python3-venv make graphviz)
pdf_packages=(latexmk texlive-xetex texlive-latex-recommended texlive-latex-extra texlive-fonts-recommended
  fonts-dejavu-core fonts-freefont-otf tex-gyre xindy)
hosts_packages=(debootstrap qemu-user-static binfmt-support ca-certificates gpg gpgv debian-archive-keyring
  xz-utils)
verify_packages=(openssh-client)
check_packages=(poppler-utils chromium git iproute2 prometheus)
binfmt=/proc/sys/fs/binfmt_misc

usage() {
  echo "usage: $0 [--probe|--make] [html|pdf|hosts|verify|check] [TARGET]" >&2
  exit 2
}

mode=install
case ${1:-} in
  --probe | --make) mode=${1#--}; shift ;;
esac
purpose=${1:-check}
case $purpose in
  html) packages=("${html_packages[@]}") ;;
  pdf) packages=("${html_packages[@]}" "${pdf_packages[@]}") ;;
  hosts) packages=("${hosts_packages[@]}") ;;
  verify) packages=("${html_packages[@]}" "${verify_packages[@]}") ;;
  check) packages=("${html_packages[@]}" "${pdf_packages[@]}" "${hosts_packages[@]}" "${verify_packages[@]}"
    "${check_packages[@]}") ;;
  *) usage ;;
esac
target=${2:-$purpose}  # the make target to run again
[[ $target == hosts ]] && target=check
(($# <= 1)) || [[ $mode == make && $# == 2 ]] || usage
hosts=no
[[ $purpose == hosts || $purpose == check ]] && hosts=yes

# The engine the checks use (checks/hosts/engine.py): ZR_ENGINE, else the engine's own docker client, else
# any docker, else Podman.
engine_cli() {
  if [[ -n ${ZR_ENGINE:-} ]]; then
    echo "$ZR_ENGINE"
  elif [[ -x /usr/bin/docker ]]; then
    echo /usr/bin/docker
  else
    command -v docker || command -v podman || true
  fi
}
engine_answers() {
  local cli; cli=$(engine_cli)
  [[ -n $cli ]] && timeout 20 "$cli" version >/dev/null 2>&1
}
# An engine is installed when one answers, or Podman or a Docker daemon is on the machine: a docker client
# alone (some images ship one in /usr/local/bin) is not an engine, and such a machine gets docker.io.
engine_installed() {
  engine_answers || command -v podman >/dev/null ||
    PATH="${ZR_DAEMON_PATH:-$PATH:/usr/sbin:/usr/bin}" command -v dockerd >/dev/null
}
binfmt_ready() {
  [[ -r $binfmt/qemu-s390x ]] && grep -q '^enabled' "$binfmt/qemu-s390x" \
    && grep -q '^flags: .*F' "$binfmt/qemu-s390x"
}

# missing_packages: the packages of this purpose dpkg does not have installed, one a line (one dpkg-query).
missing_packages() {
  local wanted=("${packages[@]}") p
  if [[ $hosts == yes ]] && ! engine_installed; then
    wanted+=(docker.io)  # Docker or Podman already there is kept; a machine with neither gets docker.io
  fi
  local -A ok=()
  for p in $(dpkg-query -W -f='${Package}=${db:Status-Abbrev}\n' "${wanted[@]}" 2>/dev/null || true); do
    [[ $p == *=ii ]] && ok[${p%=*}]=1
  done
  for p in ${ZR_PREREQS_MISSING:-}; do
    unset "ok[$p]"
  done
  for p in "${wanted[@]}"; do
    [[ -n ${ok[$p]:-} ]] || echo "$p"
  done
}

# problems: what is missing, one item a line: "package NAME", "engine", "binfmt".
problems() {
  missing_packages | sed 's/^/package /'
  if [[ $hosts == yes ]]; then
    engine_answers || echo engine
    binfmt_ready || echo binfmt
  fi
}

# sentence PROBLEMS: the one sentence a user without root reads.
sentence() {
  local pkgs others=() remedy
  pkgs=$(sed -n 's/^package //p' <<<"$1" | paste -sd, - | sed 's/,/, /g')
  remedy="run \`sudo bash .ci/prereqs.sh $purpose\` once, then \`make $target\` again"
  if grep -qx engine <<<"$1"; then
    local cli sock=/var/run/docker.sock
    cli=$(engine_cli)
    if [[ $cli == *docker && -S $sock && ! -w $sock && -z $pkgs ]]; then
      # Root can do nothing more here: this user may not use the engine.
      echo "zrunbook's checks need the container engine, which does not answer for user $(id -un): run \`sudo usermod -aG docker $(id -un)\`, log in again, then \`make $target\` again."
      return
    fi
    others+=("a container engine that answers")
  fi
  grep -qx binfmt <<<"$1" && others+=("qemu-s390x in binfmt_misc with the F flag")
  if ((${#others[@]} == 0)); then
    echo "zrunbook needs Debian packages that are missing ($pkgs): $remedy."
  else
    local what
    what=$([[ -n $pkgs ]] && echo "Debian packages $pkgs; ")$(printf '%s; ' "${others[@]}")
    echo "zrunbook needs set-up that is missing (${what%; }): $remedy."
  fi
}

# install PROBLEMS, as root: packages, then the engine, then binfmt.
install() {
  local pkgs
  export DEBIAN_FRONTEND=noninteractive
  mapfile -t pkgs < <(sed -n 's/^package //p' <<<"$1")
  if ((${#pkgs[@]})); then
    echo "installing Debian packages: ${pkgs[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${pkgs[@]}" </dev/null
  fi
  [[ $hosts == yes ]] || return 0
  if ! engine_answers; then
    # Debian's docker.io puts the daemon in /usr/sbin, which a non-login PATH may lack.
    local dockerd_bin
    dockerd_bin=$(PATH="$PATH:/usr/sbin:/usr/bin" command -v dockerd || true)
    if [[ -n $dockerd_bin ]]; then
      if [[ -d /run/systemd/system && -z ${ZR_PREREQS_NO_SYSTEMD:-} ]]; then
        systemctl start docker
      else
        echo "starting dockerd in the background (log: /var/log/dockerd.log)"
        # 9>&-: the daemon outlives this script and must not keep its lock (fd 9), or every later set-up waits
        nohup "$dockerd_bin" >/var/log/dockerd.log 2>&1 </dev/null 9>&- &
      fi
      for _ in $(seq 60); do
        engine_answers && break
        sleep 1
      done
    fi
    if ! engine_answers; then
      if [[ -z $dockerd_bin ]]; then
        echo "No container engine answers and no dockerd was found: apt-get install docker.io." >&2
      else
        echo "No container engine answers after starting $dockerd_bin: see /var/log/dockerd.log." >&2
      fi
      exit 1
    fi
  fi
  # qemu-user for the s390x host. Debian's qemu-user-static registers with the F flag (the kernel opens
  # the interpreter at registration, so it works inside containers).
  [[ -e $binfmt/status ]] || mount -t binfmt_misc binfmt_misc "$binfmt"
  binfmt_ready || update-binfmts --enable qemu-s390x || true  # checked just below
  if ! binfmt_ready; then
    echo "binfmt entry qemu-s390x is disabled or lacks the F flag: containers cannot run s390x binaries." >&2
    exit 1
  fi
}

found=$(problems)
case $mode in
  probe)
    [[ -z $found ]] || { echo "$found"; exit 1; }
    ;;
  make)
    [[ -n $found ]] || exit 0
    if [[ $(id -u) -ne 0 ]]; then
      sentence "$found" >&2
      exit 1
    fi
    list=${found//package /}
    list=${list/engine/a container engine that answers}
    list=${list/binfmt/qemu-s390x in binfmt_misc}
    echo "zrunbook: setting up what \`make $target\` needs: ${list//$'\n'/, }"
    bash "$here/prereqs.sh" "$purpose"
    ;;
  install)
    if [[ $(id -u) -ne 0 ]]; then
      echo "Run this as root (sudo bash .ci/prereqs.sh $purpose): it installs Debian packages." >&2
      exit 1
    fi
    # Two makes may set up at once: one installs, the other waits and then finds nothing missing.
    exec 9>/var/lock/zrunbook-prereqs.lock
    flock 9
    found=$(problems)
    if [[ -z $found ]]; then
      echo "zrunbook: nothing is missing for \`make $target\`."
    else
      install "$found"
    fi
    if [[ $hosts == yes ]]; then
      echo "container hosts ready: $("$(engine_cli)" --version), debootstrap, qemu-s390x (binfmt F)"
    fi
    ;;
esac
