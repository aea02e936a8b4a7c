#!/usr/bin/env bash
# negates: ihs/gskit/*-2013.sh
# checker: gskit-cmd
# rejects: gskcmd -keydb -create: -pw must come from an environment variable,
# Negative case: the study's key database command with the password typed on the command line
# (000_1ab4cc40e3a5fd7a.txt, "Create a CMS keystore for signer certificates"). Must be rejected.
set -euo pipefail
gskcmd -keydb -create -db /opt/IBM/HTTPServer/ssl/key.kdb -pw 1234 -type cms -expire 999 -stash
