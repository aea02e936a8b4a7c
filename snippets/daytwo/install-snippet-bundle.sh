#!/usr/bin/env bash
# Install the runbook's snippet bundle, as downloaded from this site with its .sha256, as /opt/zrunbook/snippets:
# the folder the renewal's timer and cron line and the monitoring exporter run from. Run as root in the folder the
# two files are in. Root runs what it installs, so the files become root's, changeable by no one else and readable
# by all (httpd's user runs the key check from there); a bundle whose SHA-256 differs is not unpacked.
# Usage: install-snippet-bundle.sh [BUNDLE]   (default ./zrunbook-snippets.tar.gz, with BUNDLE.sha256 beside it)
# Environment: ZRUNBOOK_DIR (/opt/zrunbook). The bundle it replaces is kept as ZRUNBOOK_DIR/snippets.previous.
set -euo pipefail

die() { echo "install-snippet-bundle: $*" >&2; exit 1; }
(($# <= 1)) || { echo "Usage: $0 [BUNDLE]" >&2; exit 2; }
bundle=${1:-./zrunbook-snippets.tar.gz}
dir=${ZRUNBOOK_DIR:-/opt/zrunbook}

[[ $EUID -eq 0 ]] || die "run this as root: root runs the files it installs."
for tool in sha256sum tar stat; do
  command -v "$tool" >/dev/null || die "$tool is missing: install coreutils and tar."
done
[[ -f $bundle ]] || die "there is no bundle at $bundle: download zrunbook-snippets.tar.gz and its .sha256 from the" \
  "site's downloads folder, and run this where they are (or name the bundle)."
[[ -f $bundle.sha256 ]] || die "there is no $bundle.sha256 beside the bundle: download it from the same place." \
  "Nothing was installed."
want=$(awk 'NR == 1 { print $1 }' "$bundle.sha256")
[[ $want =~ ^[0-9a-f]{64}$ ]] || die "$bundle.sha256 holds no SHA-256 (it should be the site's file, as sha256sum" \
  "writes it). Nothing was installed."
have=$(sha256sum "$bundle" | cut -d' ' -f1)
[[ $have == "$want" ]] || die "$bundle does not have the SHA-256 in $bundle.sha256 ($have, not $want): download" \
  "both again. Nothing was installed."

# The folder above the bundle, and each above it, must be root's alone too: whoever could rename one could put other
# files in its place. Checked before anything is made, so that an existing folder is refused, not repaired.
parent=$dir
until [[ -e $parent ]]; do parent=$(dirname -- "$parent"); done
parent=$(readlink -f -- "$parent")
while :; do
  read -r owner mode < <(stat -c '%u %a' -- "$parent")
  if [[ $owner != 0 ]] || { ((8#$mode & 8#022)) && ! ((8#$mode & 8#1000)); }; then
    die "$parent is not root's alone (owner uid $owner, mode $mode): make it root's, mode 0755, before installing" \
      "files that root runs below it. Nothing was installed."
  fi
  [[ $parent == / ]] && break
  parent=$(dirname -- "$parent")
done
install -d -m 0755 -o root -g root "$dir"
[[ ! -L $dir ]] || die "$dir is a link: give the folder itself (ZRUNBOOK_DIR). Nothing was installed."

# Unpacked beside the old one, then moved into place: no run ever sees half a bundle. As root tar would keep the
# owners the archive names (the build machine's); --no-same-owner makes every file root's.
umask 022
new=$(mktemp -d "$dir/.snippets.XXXXXX")
trap 'rm -rf "$new"' EXIT
tar -xzf "$bundle" -C "$new" --no-same-owner --no-same-permissions
[[ -f $new/zrunbook-snippets/MANIFEST.json ]] || die "$bundle is not the runbook's snippet bundle (no" \
  "zrunbook-snippets/MANIFEST.json in it). Nothing was installed."
chown -R root:root "$new/zrunbook-snippets"
chmod -R u=rwX,go=rX "$new/zrunbook-snippets"
chmod 0755 "$new"
files=$(find "$new/zrunbook-snippets" -type f | wc -l)
# Not while a renewal runs from the bundle it replaces: the renewal holds this lock for its whole run.
exec 9>>/run/renew-token-certificate.lock
flock -w 600 9 || die "a renewal has held /run/renew-token-certificate.lock for 10 minutes: try again when it ends." \
  "Nothing was installed."
if [[ -e $dir/snippets ]]; then
  rm -rf "$dir/snippets.previous"
  mv "$dir/snippets" "$dir/snippets.previous"
fi
mv "$new/zrunbook-snippets" "$dir/snippets"
echo "installed the snippet bundle (SHA-256 $have, $files files) as $dir/snippets, root's, readable by all" \
  "$([[ -e $dir/snippets.previous ]] && echo "; the bundle it replaced is $dir/snippets.previous")."
