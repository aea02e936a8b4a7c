#!/usr/bin/env bash
# Says whether a token PIN is as strong as openCryptoki lets it be: exactly 8 characters (the ICA, Soft and EP11
# tokens take no more: a longer PIN is counted as a failed login at each C_Login; another token's maximum, the
# 'PIN Length' range pkcsconf -t shows, goes in MAX_PIN_LEN) and not digits alone: three of lowercase letters,
# uppercase letters, digits and other characters, no blanks. The PIN is read from the environment variable named by
# the argument, never from the command line, and never printed: check-pin-strength.sh NEW_TOKEN_USER_PIN
# Exit status 0: strong enough; 1: not (the reason on stderr). Run it before you set a PIN (init-token.sh,
# rotate-token-pin.sh) with the PIN you mean to set.
set -euo pipefail

die() { echo "$*" >&2; exit 1; }
(($# == 1)) && [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "Usage: $0 VARIABLE (the name of the variable that holds the PIN)"
name=$1
[[ -n ${!name:-} ]] || die "$name is empty or not set: export the PIN you mean to set in it."
pin=${!name}
[[ $pin != *[[:space:]]* ]] || die "The PIN in $name has a blank or a line break: a PIN file keeps one line."
max=${MAX_PIN_LEN:-8}
if ! [[ $max =~ ^[0-9]+$ ]] || ((max < 8)); then die "MAX_PIN_LEN=$max is not a PIN length of 8 or more."; fi
((${#pin} >= 8)) || die "The PIN in $name has ${#pin} characters: use 8, the most openCryptoki's ICA and Soft tokens take."
((${#pin} <= max)) || die "The PIN in $name has ${#pin} characters, more than the token takes ($max): openCryptoki" \
  "counts a login with a longer PIN as a failed one, so a PIN file holding it costs a try at every httpd start."
[[ $pin == *[![:digit:]]* ]] || die "The PIN in $name is digits alone: 10^8 PINs of 8 digits are few to try offline" \
  "against a copy of the token. Mix letters, digits and other characters."
classes=0
for class in '[[:lower:]]' '[[:upper:]]' '[[:digit:]]' '[^[:alnum:]]'; do
  if [[ $pin =~ $class ]]; then classes=$((classes + 1)); fi
done
((classes >= 3)) || die "The PIN in $name uses $classes of lowercase letters, uppercase letters, digits and other" \
  "characters: use at least 3."
echo "The PIN in $name has ${#pin} characters from $classes of the 4 kinds: strong enough."
