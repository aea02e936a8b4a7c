#!/usr/bin/env bash
# What the container hosts (checks/hosts) need on a fresh Debian 12 machine, as root; safe to run
# again. Installs a container engine (keeps Podman or Docker if one is there, else docker.io),
# debootstrap, qemu-user-static and binfmt-support; starts dockerd in the background when no engine
# answers and there is no systemd to do it; mounts binfmt_misc and enables qemu-s390x.
# Podman is accepted when it is already installed, but it is untested here (it cannot start
# containers on the build machines), so a machine with neither engine gets docker.io.
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "Run this as root (sudo .ci/hosts-prereqs.sh): it installs packages and starts dockerd." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

packages=(debootstrap qemu-user-static binfmt-support ca-certificates)
if ! installed docker.io && ! installed podman && ! installed docker-ce; then
  packages+=(docker.io)
fi
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The engine. The docker client first on PATH may be one without buildx: ask the engine's own.
engine_answers() {
  if [[ -x /usr/bin/docker ]]; then
    timeout 20 /usr/bin/docker info >/dev/null 2>&1
  elif command -v podman >/dev/null; then
    timeout 20 podman info >/dev/null 2>&1
  else
    return 1
  fi
}
# Debian's docker.io puts the daemon in /usr/sbin, which a non-login PATH may lack.
dockerd_bin=$(PATH="$PATH:/usr/sbin:/usr/bin" command -v dockerd || true)
if ! engine_answers; then
  if [[ -n $dockerd_bin ]]; then
    if [[ -d /run/systemd/system ]]; then
      systemctl start docker
    else
      echo "starting dockerd in the background (log: /var/log/dockerd.log)"
      nohup "$dockerd_bin" >/var/log/dockerd.log 2>&1 &
    fi
    for _ in $(seq 60); do
      engine_answers && break
      sleep 1
    done
  fi
  if ! engine_answers; then
    if [[ -z $dockerd_bin ]]; then
      echo "No container engine answers and no dockerd was found: install docker.io (apt-get install docker.io)." >&2
    else
      echo "No container engine answers (docker info / podman info) after starting $dockerd_bin: see /var/log/dockerd.log." >&2
    fi
    exit 1
  fi
fi

# qemu-user for the s390x host. Debian's qemu-user-static registers with the F flag (the kernel
# opens the interpreter at registration, so it works inside containers).
if [[ ! -e /proc/sys/fs/binfmt_misc/status ]]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-s390x ]]; then
  update-binfmts --enable qemu-s390x
fi
if ! grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-s390x; then
  echo "binfmt entry qemu-s390x lacks the F flag: containers cannot run s390x binaries." >&2
  exit 1
fi
echo "container hosts ready: $(/usr/bin/docker version --format 'docker {{.Server.Version}}' 2>/dev/null \
  || podman --version), debootstrap, qemu-s390x (binfmt F)"
