#!/usr/bin/env bash
# Sets up make verify's login account on one host, once, as root (with your configuration management, not by
# verify, which changes nothing): the runbook's read-only checks copied to /usr/local/libexec/zrunbook-verify
# (root's, mode 755), and zrunbook-verify.sudoers installed as /etc/sudoers.d/zrunbook-verify with the login
# user and the servers' users set, checked by visudo -cf before it is put in place. Run it from the snippets
# folder of this runbook's checkout or bundle, with the login user (it must exist and hold your SSH key) and
# the users your servers run as:
#   bash verify/install-verify-account.sh zrops www-data [wasadmin ...]
# Run it again after you update the runbook: verify refuses checks on a host that differ from its own.
set -euo pipefail

die() { echo "install-verify-account: $*" >&2; exit 1; }
((EUID == 0)) || die "run as root: it writes /usr/local/libexec and /etc/sudoers.d."
(($# >= 2)) || die "usage: $0 LOGIN_USER SERVICE_USER... (the user verify logs in as, and the users your servers run as)"
for tool in visudo install sed; do
  command -v "$tool" >/dev/null || die "$tool is missing: install sudo and coreutils."
done
for user in "$@"; do
  [[ $user =~ ^[a-z_][a-z0-9_-]*$ ]] || die "'$user' is not a user name."
  id "$user" >/dev/null 2>&1 || die "there is no user $user on this host (create the login user first: useradd -m $user)."
done
login=$1
shift
services=$(IFS=,; echo "$*")
snippets=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
checks=(crypto/verify/check-key-in-token.sh crypto/verify/check-token-signs.sh ihs/apache/check-token-site-files.sh
        verify/doctor-probe.sh)
for check in "${checks[@]}" verify/zrunbook-verify.sudoers; do
  [[ -r $snippets/$check ]] || die "$snippets/$check is missing: run this from the runbook's snippets folder."
done

dest=/usr/local/libexec/zrunbook-verify
install -d -m 0755 -o root -g root "$dest"
for check in "${checks[@]}"; do
  install -m 0755 -o root -g root "$snippets/$check" "$dest/"
done
rules=$(mktemp)
trap 'rm -f "$rules"' EXIT
sed -e "s/^User_Alias  ZR_VERIFY = .*/User_Alias  ZR_VERIFY = $login/" \
    -e "s/^Runas_Alias ZR_SERVICES = .*/Runas_Alias ZR_SERVICES = $services/" \
    "$snippets/verify/zrunbook-verify.sudoers" >"$rules"
said=$(visudo -cf "$rules" 2>&1) || die "visudo refused the rules, nothing was installed in /etc/sudoers.d: $said"
install -m 0440 -o root -g root "$rules" /etc/sudoers.d/zrunbook-verify
echo "installed ${#checks[@]} checks in $dest and /etc/sudoers.d/zrunbook-verify: $login may run them as root or as $services, nothing else."
