#!/usr/bin/env bash
# What the container hosts (checks/hosts) need, as root: the "hosts" part of prereqs.sh, which holds the
# list (an engine that answers, debootstrap, qemu-user-static with binfmt_misc, the Debian keyring).
exec bash "$(dirname "$0")/prereqs.sh" hosts "$@"
