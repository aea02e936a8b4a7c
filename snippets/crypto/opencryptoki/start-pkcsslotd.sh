#!/usr/bin/env bash
# Starts openCryptoki's slot daemon pkcsslotd now and at every boot, and waits for its socket. Makes the system
# user zrprobe, listed in group pkcs11 and in no other group, owning nothing and with no login: the runbook's probes
# (this step, the exporter, the doctor, the checks) run openCryptoki's tools as zrprobe, never as root.
# Run as root. Under systemd it enables pkcsslotd.service; in a container without systemd it starts the daemon directly.
# With the argument restart it stops a running daemon first (after a change to opencryptoki.conf): systemctl restart
# under systemd; in a container it ends the daemon by its PID and starts a new one.
set -euo pipefail

action=${1:-start}
[[ $action == start || $action == restart ]] || { echo "Usage: $0 [restart]" >&2; exit 2; }

[[ $EUID -eq 0 ]] || { echo "Run this as root: pkcsslotd is a system service." >&2; exit 1; }
for cmd in pkcsslotd pkcsconf; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing: install openCryptoki first." >&2; exit 1; }
done
command -v setpriv >/dev/null || { echo "setpriv is missing: install util-linux." >&2; exit 1; }
for cmd in getent useradd gpasswd; do
  command -v "$cmd" >/dev/null || { echo "$cmd is missing: install libc-bin and passwd." >&2; exit 1; }
done
# openCryptoki serves only members of pkcs11, root included. Its package adds root to the group, but a shell
# started before the install does not have it yet (every openCryptoki call then fails with CKR_HOST_MEMORY).
if ! id -Gn | tr ' ' '\n' | grep -qx pkcs11; then
  echo "This shell is not in the pkcs11 group yet (openCryptoki's package added root to it after the shell" \
       "started): log in again (a new login or 'su -'), then run this step again." >&2
  exit 1
fi

# The daemon counts as up only when it answers: pkcsconf -s lists the slots through its socket.
# Token tools never as root: pkcsconf -s logs in to nothing, but it loads openCryptoki, which opens every token's
# NVTOK.DAT and sets its mode and group; as root that follows a link a pkcs11 member planted (CVE-2026-23893,
# before 3.27 without the fix). So it runs as zrprobe, a system user in group pkcs11 only: a member's rights.
# openCryptoki 3.23 lets a user other than root attach to the slot daemon's memory only when /etc/group lists it as
# a member of pkcs11 (usr/lib/api/shrd_mem.c.in): a group id alone (setpriv --regid=pkcs11 for nobody) is refused
# with CKR_HOST_MEMORY. So the probes run as a member of their own.
getent group pkcs11 >/dev/null || { echo "Group pkcs11 does not exist: install openCryptoki first." >&2; exit 1; }
if ! getent passwd zrprobe >/dev/null; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --user-group zrprobe
fi
getent group pkcs11 | cut -d: -f4 | tr , '\n' | grep -qx zrprobe || gpasswd -a zrprobe pkcs11 >/dev/null
as_group() { setpriv --reuid=zrprobe --regid=pkcs11 --clear-groups -- "$@"; }
answers() { as_group pkcsconf -s >/dev/null 2>&1; }

# The daemon's PIDs, zombies left out (a zombie has exited; only its parent can reap it).
live_pids() { ps -C pkcsslotd -o pid=,stat= 2>/dev/null | awk '$2 !~ /^Z/ { print $1 }'; }

# A container without systemd: stop the running daemon by its PID, so that the start below reads the configuration
# again; the daemon removes its socket as it exits.
stop_daemon() {
  command -v ps >/dev/null || { echo "ps is missing: install procps." >&2; exit 1; }
  local pids
  mapfile -t pids < <(live_pids)
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}"
  for _ in $(seq 50); do
    [[ -z $(live_pids) ]] && break
    sleep 0.2
  done
  [[ -z $(live_pids) ]] || { echo "pkcsslotd (PID ${pids[*]}) did not stop within 10 seconds." >&2; exit 1; }
  if ps -C pkcsslotd -o stat= 2>/dev/null | awk '/^Z/ { z = 1 } END { exit !z }'; then
    echo "Note: the old pkcsslotd has exited but nothing reaps it (a zombie): this container has no init." \
         "Start containers with one (docker run --init) so that exited daemons go away." >&2
  fi
}

if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then  # systemd runs (its package has systemctl)
  systemctl enable --now pkcsslotd.service
  if [[ $action == restart ]]; then systemctl restart pkcsslotd.service; fi
else
  if [[ $action == restart ]]; then stop_daemon; fi
  if ! answers; then
    # No systemd (a container): create /run/opencryptoki and the lock directories as the unit's tmpfiles rule
    # would, with systemd-tmpfiles where it is installed, else from the rule's d/D lines (type path mode user group).
    rule=/usr/lib/tmpfiles.d/opencryptoki.conf
    if command -v systemd-tmpfiles >/dev/null; then
      systemd-tmpfiles --create "$rule"
    else
      while read -r type path mode user group _; do
        if [[ $type == [dD] ]]; then install -d -m "$mode" -o "$user" -g "$group" "$path"; fi
      done < "$rule"
    fi
    pkcsslotd
  fi
fi

for _ in $(seq 50); do
  answers && break
  sleep 0.2
done
if ! answers; then
  echo "pkcsslotd did not come up, or does not answer: pkcsconf -s says: $(as_group pkcsconf -s 2>&1 | tail -n 1)" >&2
  echo "See 'journalctl -u pkcsslotd' (or syslog) for the daemon's reason. CKR_HOST_MEMORY or a permission error" \
       "here usually means this shell lacks the pkcs11 group: log in again." >&2
  exit 1
fi
echo "pkcsslotd is running; its slots:"
as_group pkcsconf -s | grep -E '^Slot #|Flags'
