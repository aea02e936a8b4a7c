#!/usr/bin/env bash
# Initialises an openCryptoki token without prompts: label, new SO PIN, user PIN; then checks the flags.
# Needs openCryptoki 3.22 or later (p11sak --so), a running pkcsslotd, and the token administrator (a pkcs11
# member whose token folder let-pkcs11-group-store-keys.sh has opened) or root.
# Environment: TOKEN_LABEL, TOKEN_SO_PIN, TOKEN_USER_PIN; optional TOKEN_SLOT (default: the ICA token's slot)
# and TOKEN_INITIAL_SO_PIN.
set -euo pipefail

: "${TOKEN_LABEL:?set TOKEN_LABEL to the token label your applications will use, e.g. IBMICATOK}"
: "${TOKEN_SO_PIN:?set TOKEN_SO_PIN to the new security officer (SO) PIN}"
: "${TOKEN_USER_PIN:?set TOKEN_USER_PIN to the user PIN the applications log in with}"
# Every openCryptoki token leaves the factory with the SO PIN made of the digits 8 down to 1
# (man pkcsconf); set TOKEN_INITIAL_SO_PIN only if yours differs.
initial_so_pin="${TOKEN_INITIAL_SO_PIN:-$(printf '%s' {8..1})}"

# Token flags (PKCS #11 CK_TOKEN_INFO, pkcs11types.h): test bits, never whole values.
readonly USER_PIN_INITIALIZED=0x8 TOKEN_INITIALIZED=0x400 USER_PIN_COUNT_LOW=0x10000
readonly USER_PIN_LOCKED=0x40000 USER_PIN_TO_BE_CHANGED=0x80000 SO_PIN_COUNT_LOW=0x100000
readonly SO_PIN_LOCKED=0x400000 SO_PIN_TO_BE_CHANGED=0x800000 ERROR_STATE=0x1000000

die() { echo "$*" >&2; exit 1; }

# openCryptoki's tools are in /usr/sbin, which an ordinary login's PATH lacks on Debian and Ubuntu.
PATH="$PATH:/usr/sbin:/sbin"
command -v pkcsconf >/dev/null || die "pkcsconf is not installed: install openCryptoki first."
command -v p11sak >/dev/null || die "p11sak (openCryptoki's key tool, used to test the PINs) is missing:" \
  "install openCryptoki 3.22 or later."
# The SO PIN test logs in as SO with p11sak --so, which openCryptoki 3.22 added: check before changing anything.
# (help read whole first: grep -q would close the pipe early, and pipefail would report p11sak's SIGPIPE)
p11sak_help=$(p11sak list-key --help 2>&1 || true)
[[ $p11sak_help == *--so* ]] ||
  die "This script needs openCryptoki 3.22 or later: this system's p11sak has no --so option to test the SO PIN" \
    "with. Nothing was changed. Upgrade openCryptoki, or initialise the token by hand (pkcsconf -I, -P, -u)."
# pkcsslotd must answer (pkcsconf -s lists the slots through it); pgrep is not on every system.
pkcsconf -s >/dev/null 2>&1 ||
  die "pkcsslotd is not running or does not answer this shell: start it (systemctl enable --now pkcsslotd)," \
    "and run this from a login that is in the pkcs11 group (log in again after installing openCryptoki)."

# token_field SLOT NAME: one field of 'pkcsconf -t -c SLOT', blanks trimmed.
token_field() {
  { pkcsconf -t -c "$1" 2>/dev/null || true; } | sed -n "s/^[[:space:]]*$2:[[:space:]]*//p" | sed 's/[[:space:]]*$//' | head -n1
}
# slot_of_model MODEL: the slot whose token has this model (pkcsconf -t prints "Token #N Info:").
# The ICA token calls itself "ICA" in openCryptoki 3.x and called itself "IBM ICA" in 2.x.
slot_of_model() {
  { pkcsconf -t 2>/dev/null || true; } | awk -v want="$1" '
    /^Token #[0-9]+ Info:/ { slot = substr($2, 2) }
    /^[[:space:]]*Model:/  { sub(/^[[:space:]]*Model:[[:space:]]*/, ""); sub(/[[:space:]]+$/, "")
                             if ($0 == want || $0 == "IBM " want) { print slot; exit } }'
}

slot="${TOKEN_SLOT:-}"
if [[ -z "$slot" ]]; then
  slot=$(slot_of_model ICA)
  if [[ -z "$slot" && "$(uname -m)" != s390x ]]; then
    slot=$(slot_of_model "Soft")   # no ICA token off IBM Z: the software token stands in
  fi
  [[ -n "$slot" ]] || die "No ICA token found in 'pkcsconf -t': install the ICA token package" \
    "(opencryptoki-icatok, openCryptoki-64bit or opencryptoki) and restart pkcsslotd, or set TOKEN_SLOT."
fi
[[ "$slot" =~ ^[0-9]+$ ]] || die "TOKEN_SLOT must be a slot number as 'pkcsconf -s' lists it, not '$slot'."
pkcsconf -s | grep -qx "Slot #$slot Info" ||
  die "Slot $slot does not exist: 'pkcsconf -s' lists the slots of /etc/opencryptoki/opencryptoki.conf."
model=$(token_field "$slot" Model)
[[ -n "$model" ]] || die "Slot $slot has no token present: its token library did not load (see 'pkcsconf -s')."

# token_folder: the slot's folder in the data store: its tokname in opencryptoki.conf, else its token type's default.
token_folder() {
  local conf=${OCK_CONF:-/etc/opencryptoki/opencryptoki.conf} store=${OCK_DATA_STORE:-/var/lib/opencryptoki}
  local name="" stdll=""
  if [[ -r $conf ]]; then
    read -r name stdll < <(awk -v want="$slot" '
      { sub(/#.*/, ""); gsub(/[{}=]/, " & ") }
      { for (i = 1; i <= NF; i++) {
          if ($i == "slot") { current = $(i + 1); i++ }
          else if ($i == "}") { current = "" }
          else if (current == want && ($i == "tokname" || $i == "stdll") && $(i + 1) == "=") {
            v[$i] = $(i + 2); i += 2
          }
      } }
      END { print (v["tokname"] == "" ? "-" : v["tokname"]), (v["stdll"] == "" ? "-" : v["stdll"]) }' "$conf") || true
  fi
  [[ $name == - ]] && name=""
  if [[ -z $name ]]; then
    case "$stdll:$model" in
      libpkcs11_sw.so:* | -:Soft | :Soft) name=swtok ;;
      libpkcs11_ica.so:* | -:ICA | :ICA | -:"IBM ICA" | :"IBM ICA") name=lite ;;
      libpkcs11_cca.so:* | -:CCA | :CCA) name=ccatok ;;
      libpkcs11_ep11.so:* | -:EP11 | :EP11) name=ep11tok ;;
    esac
  fi
  [[ -n $name ]] && echo "$store/$name"
  true
}
folder=$(token_folder)

flags() { printf '%d' "$(token_field "$slot" Flags | awk '{print $1}')"; }
has() { (( $(flags) & $1 )); }

# state: the token's condition in words, for messages.
state() {
  local f words=()
  f=$(flags)
  if (( f & TOKEN_INITIALIZED )); then words+=("initialised as '$(token_field "$slot" Label)'"); else words+=("not initialised"); fi
  if (( f & SO_PIN_TO_BE_CHANGED )); then words+=("SO PIN still the factory one"); else words+=("SO PIN changed"); fi
  if (( f & USER_PIN_INITIALIZED )); then words+=("user PIN set"); else words+=("no user PIN"); fi
  (( f & USER_PIN_INITIALIZED && f & USER_PIN_TO_BE_CHANGED )) && words+=("user PIN must be changed")
  (( f & SO_PIN_COUNT_LOW )) && words+=("a wrong SO PIN was entered")
  (( f & USER_PIN_COUNT_LOW )) && words+=("a wrong user PIN was entered")
  (( f & SO_PIN_LOCKED )) && words+=("SO PIN LOCKED")
  (( f & USER_PIN_LOCKED )) && words+=("user PIN LOCKED")
  (( f & ERROR_STATE )) && words+=("token in ERROR STATE")
  local text
  text=$(printf '%s, ' "${words[@]}")
  printf 'slot %s (%s): %s; flags %s\n' "$slot" "$model" "${text%, }" "$(token_field "$slot" Flags | awk '{print $1}')"
}

# PIN lengths the token accepts, e.g. "PIN Length: 4-8".
IFS=- read -r pin_min pin_max < <(token_field "$slot" "PIN Length")
for name in TOKEN_SO_PIN TOKEN_USER_PIN; do
  value=${!name}; length=${#value}
  (( length >= pin_min && length <= pin_max )) ||
    die "$name has $length characters; this token takes PINs of $pin_min to $pin_max. Nothing was changed."
done

# openCryptoki writes the token's files (NVTOK.DAT, MK_SO, MK_USER) into its folder as the PINs are set. A user
# who may not write there gets a token whose flags say "user PIN set" without MK_USER: check before any change.
if [[ -n $folder && -d $folder && $EUID -ne 0 ]]; then
  blocked=$folder
  if [[ -w $folder && -x $folder ]]; then
    blocked=$(find "$folder" \( -type d -o -type f \) ! -writable -print -quit 2>/dev/null || true)
  fi
  [[ -z $blocked ]] || die "The token folder $folder is not writable by $(id -un) ($blocked is not), and openCryptoki" \
    "writes the token's files there when the PINs are set. Nothing was changed. As root, run" \
    "let-pkcs11-group-store-keys.sh (the token page's step 3), log in again, then run this again. Now $(state)"
fi

# pkcsconf takes the PINs it is not given as options at its prompts, which read standard input: the PINs go there,
# never on a command line that ps shows. Its prompts are taken out of what it says.
unprompt() { sed -e 's/\(Re-enter\|Enter\) [^:]*: //g' -e '/^[[:space:]]*$/d'; }
# step DESCRIPTION BIT WANT-SET INPUT COMMAND...: run one pkcsconf action with INPUT (one answer a line) on its
# standard input, then trust the flags, not its exit status.
step() {
  local what=$1 bit=$2 want=$3 input=$4 out; shift 4
  out=$("$@" <<<"$input" 2>&1 | unprompt) || true
  if { [[ $want == set ]] && has "$bit"; } || { [[ $want == clear ]] && ! has "$bit"; }; then
    echo "done: $what"; changed=yes
  else
    die "Failed to $what (pkcsconf said: ${out:-nothing}). Now $(state)"
  fi
}

# The token refuses to keep its factory SO PIN (CKR_PIN_INVALID when "replaced" by the same digits): say so first.
if has "$SO_PIN_TO_BE_CHANGED" && [[ "$TOKEN_SO_PIN" == "$initial_so_pin" ]]; then
  die "TOKEN_SO_PIN is the factory SO PIN, which the token refuses to keep (pkcsconf would say CKR_PIN_INVALID):" \
    "choose another SO PIN. Nothing was changed. Now $(state)"
fi

changed=no
if has "$TOKEN_INITIALIZED"; then
  label=$(token_field "$slot" Label)
  [[ "$label" == "$TOKEN_LABEL" ]] || die "Slot $slot is already initialised with the label '$label'." \
    "Initialising it again would delete its keys; set TOKEN_LABEL='$label' to finish that token, or" \
    "reinitialise it by hand if you mean to. Now $(state)"
else
  step "initialise the token as '$TOKEN_LABEL'" "$TOKEN_INITIALIZED" set \
    "$initial_so_pin"$'\n'"$TOKEN_LABEL" pkcsconf -c "$slot" -I
fi
if has "$SO_PIN_TO_BE_CHANGED"; then
  step "replace the factory SO PIN" "$SO_PIN_TO_BE_CHANGED" clear \
    "$initial_so_pin"$'\n'"$TOKEN_SO_PIN"$'\n'"$TOKEN_SO_PIN" pkcsconf -c "$slot" -P
fi
if ! has "$USER_PIN_INITIALIZED"; then
  step "set the user PIN" "$USER_PIN_INITIALIZED" set \
    "$TOKEN_SO_PIN"$'\n'"$TOKEN_USER_PIN"$'\n'"$TOKEN_USER_PIN" pkcsconf -c "$slot" -u
fi
if has "$USER_PIN_TO_BE_CHANGED"; then
  # The token refuses a new PIN equal to the old one: go through a random one and back.
  # digits from the kernel's random bytes, 8 at a time: no pipe that ends early (a reader that stops would end tr
  # with SIGPIPE, which pipefail turns into a silent exit)
  temporary=""
  while ((${#temporary} < pin_max)); do temporary+=$(od -An -N8 -tu8 /dev/urandom | tr -dc 0-9); done
  temporary=${temporary:0:pin_max}
  step "change the user PIN (1 of 2)" "$USER_PIN_TO_BE_CHANGED" clear \
    "$TOKEN_USER_PIN"$'\n'"$temporary"$'\n'"$temporary" pkcsconf -c "$slot" -p
  if ! out=$(pkcsconf -c "$slot" -p <<<"$temporary"$'\n'"$TOKEN_USER_PIN"$'\n'"$TOKEN_USER_PIN" 2>&1 | unprompt); then
    # Never print a PIN: the temporary one goes to a file only the caller can read.
    pin_file=$(umask 077 && mktemp "${TMPDIR:-/tmp}/init-token-temporary-pin.XXXXXX")
    printf '%s\n' "$temporary" >"$pin_file"
    die "The user PIN is now a temporary one and could not be set back ($out). The temporary PIN is in" \
      "$pin_file (readable only by $(id -un)): set the PIN with 'pkcsconf -c $slot -p', then delete that file." \
      "Now $(state)"
  fi
  echo "done: change the user PIN (2 of 2)"; changed=yes
fi

# The flags say nothing about the PINs in the environment: log in with each. p11sak takes them from
# PKCS11_USER_PIN and PKCS11_SO_PIN, so they do not show in the process list. A wrong one counts
# towards locking that PIN, as any failed login does.
logs_in() {
  local who=$1 out
  if [[ $who == SO ]]; then
    out=$(PKCS11_SO_PIN="$TOKEN_SO_PIN" p11sak list-key all --slot "$slot" --so 2>&1) && return 0
  else
    out=$(PKCS11_USER_PIN="$TOKEN_USER_PIN" p11sak list-key all --slot "$slot" 2>&1) && return 0
  fi
  die "The token is set up, but TOKEN_${who}_PIN does not log in to it ($(grep -o 'CKR_[A-Z_]*' <<<"$out" |
    head -n1 || echo "$out")): set TOKEN_${who}_PIN to the token's $who PIN. Now $(state)"
}
# A token whose user PIN was set while its folder was closed: the flags say "user PIN set", but the file that
# holds the user's copy of the master key (MK_USER, beside MK_SO) was never written, so every login fails.
if has "$USER_PIN_INITIALIZED" && [[ -n $folder && -e $folder/MK_SO && ! -e $folder/MK_USER ]]; then
  die "MK_USER is missing from $folder: the user PIN was set while that folder was not writable, so no user PIN" \
    "can log in. TOKEN_USER_PIN is not the problem: do not try other PINs. Open the folder (as root," \
    "let-pkcs11-group-store-keys.sh), then let the security officer set the user PIN again at pkcsconf's" \
    "prompts: pkcsconf -c $slot -u (the SO PIN, then the user PIN twice), and run this again. Now $(state)"
fi
logs_in USER
logs_in SO

f=$(flags)
if (( f & TOKEN_INITIALIZED && f & USER_PIN_INITIALIZED )) &&
   (( !(f & (USER_PIN_TO_BE_CHANGED | SO_PIN_TO_BE_CHANGED | USER_PIN_LOCKED | SO_PIN_LOCKED | ERROR_STATE)) )); then
  [[ $changed == yes ]] || echo "Slot $slot already holds a ready token labelled '$TOKEN_LABEL'; nothing changed."
  echo "Token ready: $(state)"
else
  die "The token is not ready: $(state)"
fi
