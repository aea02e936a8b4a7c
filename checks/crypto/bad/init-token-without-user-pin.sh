#!/usr/bin/env bash
# negates: crypto/token/init-token.sh
# checker: testinfra
# rejects: CKF_USER_PIN_INITIALIZED is not set
# test: checks/crypto/test_init_token.py::test_flags_checker_catches_a_token_init_that_skips_the_user_pin
# A token initialisation that stops after the label and the SO PIN: no user PIN (pkcsconf -u) is set,
# so applications cannot log in. Environment as for snippets/crypto/token/init-token.sh.
set -euo pipefail
pkcsconf -c "$TOKEN_SLOT" -I -S "$TOKEN_INITIAL_SO_PIN" <<<"$TOKEN_LABEL"
pkcsconf -c "$TOKEN_SLOT" -P -S "$TOKEN_INITIAL_SO_PIN" -n "$TOKEN_SO_PIN"
