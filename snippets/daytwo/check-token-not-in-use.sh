#!/usr/bin/env bash
# Says whether a program other than the slot daemon uses an openCryptoki token: such a program maps the token's shared
# memory (/dev/shm/var.lib.opencryptoki.<folder>). Run as root: check-token-not-in-use.sh [FOLDER]
# FOLDER: the token's folder under OCK_DATA_STORE (/var/lib/opencryptoki); default lite (the ICA token) on s390x,
# swtok (the Soft token) elsewhere. Exit status 0: nobody uses it; 1: a process does, or may (named on stderr).
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# <= 1)) || die "Usage: $0 [FOLDER]"
store="${OCK_DATA_STORE:-/var/lib/opencryptoki}"
if [[ $(uname -m) == s390x ]]; then folder=${1:-lite}; else folder=${1:-swtok}; fi
[[ $folder =~ ^[A-Za-z0-9._-]+$ ]] || die "FOLDER must be a folder name under $store, not '$folder'."
[[ $EUID -eq 0 ]] || die "Run this as root: only root can see which programs map the token's memory."
token="$store/$folder"
shm_name=${token#/}
shm="/dev/shm/${shm_name//\//.}"  # the token's shared memory: its path with dots for slashes
slotd=$(cat /run/opencryptoki/pkcsslotd.pid 2>/dev/null || true)

# A process whose memory map root may not read (in a container without CAP_SYS_PTRACE) cannot be judged: it counts.
users=() unknown=()
for dir in /proc/[0-9]*; do
  pid=${dir#/proc/}
  [[ $pid == "$$" || $pid == "$PPID" || $pid == "$slotd" ]] && continue
  status=$(cat "$dir/status" 2>/dev/null) || continue  # gone meanwhile
  [[ $status =~ State:[[:space:]]*Z ]] && continue      # a zombie has exited (nothing reaps it in a container)
  name="$pid ($(cat "$dir/comm" 2>/dev/null || echo gone))"
  if ! maps=$(cat "$dir/maps" 2>/dev/null); then
    if [[ -d $dir ]]; then unknown+=("$name"); fi
  elif grep -qF "$shm" <<<"$maps"; then
    users+=("$name")
  fi
done
((${#users[@]} == 0)) || die "The token in $token is in use by process ${users[*]}: stop the services that use it."
((${#unknown[@]} == 0)) || die "Cannot tell whether process ${unknown[*]} uses the token in $token: root may not" \
  "read its memory map here (a container without CAP_SYS_PTRACE). Stop it."
echo "No process uses the token in $token."
