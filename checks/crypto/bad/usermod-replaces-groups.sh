#!/usr/bin/env bash
# The 2013 study's "add the wasadmin user to the pkcs11 group": without -a, usermod -G REPLACES the
# user's supplementary groups with pkcs11 alone.
set -euo pipefail
usermod -G pkcs11 wasadmin
