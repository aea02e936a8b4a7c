#!/usr/bin/env bash
# negates: **/*.sh
# checker: shellcheck
# rejects: Couldn't parse this redirection
# test: checks/static/test_shellcheck.py::test_shellcheck_rejects_the_studys_broken_shell
# The 2013 study's boot-time enablement, copied literally: <runlevel> is read by the shell as
# redirections, not as a placeholder.
set -euo pipefail
chkconfig -s z90crypt <runlevel>
