#!/usr/bin/env bash
# A token initialisation that stops after the label and the SO PIN: no user PIN (pkcsconf -u) is set,
# so applications cannot log in. Environment as for snippets/crypto/token/init-token.sh.
set -euo pipefail
pkcsconf -c "$TOKEN_SLOT" -I -S "$TOKEN_INITIAL_SO_PIN" <<<"$TOKEN_LABEL"
pkcsconf -c "$TOKEN_SLOT" -P -S "$TOKEN_INITIAL_SO_PIN" -n "$TOKEN_SO_PIN"
