#!/usr/bin/env bash
# Measures TLS on this machine with your Apache site's TLS settings: full handshakes (RSA 2048/4096, ECDSA P-256),
# resumed handshakes, bulk throughput and a reverse proxy's TCP vs TLS back-end junction, with the crypto acceleration
# on and off, each next to its bound from `openssl speed`.
# Needs apache2 or httpd with mod_ssl, openssl, curl; runs a private server on 127.0.0.1 only, stops it and removes its files.
# Usage: measure-tls.sh SITE.conf [--runs N] [--seconds S] [--setup NAME] [--short] [--out DIR] [--port P]   (no root needed)
set -euo pipefail

usage() { echo "usage: $0 SITE.conf [--runs N] [--seconds S] [--setup NAME] [--short] [--out DIR] [--port P]" >&2; exit 2; }

SITE="" RUNS=3 SECONDS_PER_TEST=5 OUT="" PORT=18443 ONLY="" SHORT=""
while (($#)); do
    case "$1" in
        --runs) RUNS=${2:?}; shift 2 ;;
        --seconds) SECONDS_PER_TEST=${2:?}; shift 2 ;;
        --setup) ONLY=${2:?}; shift 2 ;;
        --short) SHORT=1; shift ;;   # one run of 1 s per test, first setup only: a quick check
        --out) OUT=${2:?}; shift 2 ;;
        --port) PORT=${2:?}; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "Unknown option $1." >&2; usage ;;
        *) SITE=$1; shift ;;
    esac
done
[[ -n $SITE ]] || { echo "Name the Apache site file whose TLS settings to measure (the <VirtualHost> with SSLEngine on)." >&2; usage; }
[[ -r $SITE ]] || { echo "Cannot read the site file $SITE." >&2; exit 1; }
[[ $RUNS =~ ^[1-9][0-9]?$ && $SECONDS_PER_TEST =~ ^[1-9][0-9]?$ ]] || { echo "--runs and --seconds take 1 to 99." >&2; exit 1; }
if ! [[ $PORT =~ ^[0-9]+$ ]] || ((PORT < 1024 || PORT > 65000)); then echo "--port takes 1024 to 65000." >&2; exit 1; fi
for tool in openssl curl awk getconf; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed: install it and run again." >&2; exit 1; }
done
HTTPD=$(command -v apache2 || command -v httpd || true)
[[ -n $HTTPD ]] || { echo "Neither apache2 nor httpd is installed: install Apache httpd with mod_ssl." >&2; exit 1; }
MODDIR=""
# apxs (httpd's development package) knows the folder where it is installed; otherwise the usual places.
for d in "$(command -v apxs >/dev/null && apxs -q LIBEXECDIR 2>/dev/null || true)" /usr/lib/apache2/modules /usr/lib64/httpd/modules /usr/lib64/apache2; do
    [[ -n $d && -f $d/mod_ssl.so ]] && { MODDIR=$d; break; }
done
[[ -n $MODDIR ]] || { echo "mod_ssl.so was not found: install mod_ssl (RHEL) or apache2 (Debian, SLES)." >&2; exit 1; }
[[ -d /proc/self ]] || { echo "/proc is needed to read the server's CPU time." >&2; exit 1; }
OUT=${OUT:-tls-bench-$(uname -n)-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
TICK=$(getconf CLK_TCK)

# The setups compared: crypto acceleration on, then masked off for the server and for `openssl speed`.
case "$(uname -m)" in
    x86_64) SETUPS=(accelerated "software:OPENSSL_ia32cap=~0x200000200000000") ;;   # AES-NI, PCLMULQDQ and the AVX words off
    s390x) SETUPS=("cpacf+cex" "cpacf:OPENSSL_s390xcap=nocex" "software:OPENSSL_s390xcap=z900;nocex") ;;  # CEX off, then CPACF too
    *) SETUPS=(default) ;;
esac
# OpenSSL reaches Crypto Express by itself (/dev/z90crypt) only from 3.2: below it, `nocex` changes nothing, and the
# cpacf+cex and cpacf setups run the same code (unless an ibmca provider or engine is loaded through OPENSSL_CONF).
CEX_NOTE=""
if [[ $(uname -m) == s390x ]]; then
    ossl=$(openssl version | awk '{print $2}')
    if [[ $(printf '%s\n' 3.2 "${ossl%%[!0-9.]*}" | sort -V | head -n 1) != 3.2 ]]; then
        CEX_NOTE="OpenSSL $ossl is older than 3.2 and has no Crypto Express path of its own: the cpacf+cex and cpacf setups run the same code here (unless OPENSSL_CONF loads the ibmca provider), so a difference between them is noise, not Crypto Express."
        echo "Note: $CEX_NOTE" >&2
    fi
fi
if [[ -n $SHORT ]]; then RUNS=1 SECONDS_PER_TEST=1 ONLY=${ONLY:-${SETUPS[0]%%:*}}; fi
if [[ -n $ONLY ]]; then
    for s in "${SETUPS[@]}"; do [[ ${s%%:*} == "$ONLY" ]] && SETUPS=("$s") && break; done
    [[ ${SETUPS[0]%%:*} == "$ONLY" && ${#SETUPS[@]} == 1 ]] || { echo "No setup $ONLY on $(uname -m): the setups are ${SETUPS[*]%%:*}." >&2; exit 1; }
fi

WORK=$(mktemp -d /tmp/zr-tls-bench.XXXXXX)
chmod 755 "$WORK"
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
stop_server() {  # and wait until its processes are gone and its ports are free
    local pid
    if [[ -s $WORK/httpd.pid ]]; then
        pid=$(cat "$WORK/httpd.pid")
        "$HTTPD" -f "$WORK/httpd.conf" -k stop 2>/dev/null || true
        for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        for _ in $(seq 100); do listening "$PORT" || listening $((PORT + 1)) || listening $((PORT + 2)) || break; sleep 0.1; done
    fi
}
stop_backend() {
    [[ -s $WORK/backend.pid ]] || return 0
    "$HTTPD" -f "$WORK/backend.conf" -k stop 2>/dev/null || true
    for _ in $(seq 100); do listening $((PORT + 5)) || listening $((PORT + 6)) || break; sleep 0.1; done
}
cleanup() { stop_server; stop_backend; rm -rf "$WORK"; }
trap cleanup EXIT

for p in $(seq "$PORT" $((PORT + 6))); do
    if listening "$p"; then echo "Port $p on 127.0.0.1 is in use: pick another with --port." >&2; exit 1; fi
done

# Keys and self-signed certificates for the three key types, and the payload files.
KEYS=(rsa2048 rsa4096 ecdsa-p256)
declare -A KEYOPT=([rsa2048]="-newkey rsa:2048" [rsa4096]="-newkey rsa:4096" [ecdsa-p256]="-newkey ec -pkeyopt ec_paramgen_curve:P-256")
declare -A KEYPORT=([rsa2048]=$PORT [rsa4096]=$((PORT + 1)) [ecdsa-p256]=$((PORT + 2)))
declare -A SPEEDALG=([rsa2048]=rsa2048 [rsa4096]=rsa4096 [ecdsa-p256]=ecdsap256)
for k in "${KEYS[@]}"; do
    # shellcheck disable=SC2086 # KEYOPT holds several options
    openssl req -x509 ${KEYOPT[$k]} -nodes -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$WORK/$k.key" -out "$WORK/$k.crt" 2>/dev/null
done
mkdir -p "$WORK/htdocs"
declare -A PAYLOAD=([4k]=4096 [32k]=32768 [2.9m]=2900000 [5.8k]=5939)   # 5.8k: the WebSEAL study's page
declare -A BATCH=([4k]=400 [32k]=200 [2.9m]=8)
for p in "${!PAYLOAD[@]}"; do head -c "${PAYLOAD[$p]}" /dev/urandom >"$WORK/htdocs/$p.bin"; done
chmod -R a+rX "$WORK"

# The private server: the site's TLS directives, one loopback virtual host per key type.
load() { "$HTTPD" -l | grep -q "mod_$1.c" || [[ ! -f $MODDIR/mod_$1.so ]] || echo "LoadModule $1_module $MODDIR/mod_$1.so"; }
SITE_TLS=$(awk '/<VirtualHost/{v=1; next} /<\/VirtualHost>/{v=0} v' "$SITE" |
    grep -Eiv '^[[:space:]]*(#|$|ServerName|ServerAlias|DocumentRoot|SSLCertificate(Key|Chain)?File|CustomLog|ErrorLog|Header|Protocols)')
grep -Eqi '^[[:space:]]*SSLEngine[[:space:]]+on' <<<"$SITE_TLS" || { echo "$SITE has no <VirtualHost> with SSLEngine on." >&2; exit 1; }
server_head() {  # $1 pid file, $2 error log, then extra modules: what both Apache instances share
    local pidfile=$1 errorlog=$2 m
    shift 2
    "$HTTPD" -l | grep -q 'mpm_\|prefork.c\|worker.c\|event.c' || load mpm_event
    for m in unixd ssl socache_shmcb authz_core "$@"; do load "$m"; done
    echo "ServerRoot $WORK"
    echo "PidFile $WORK/$pidfile"
    echo "ErrorLog $WORK/$errorlog"
    echo "ServerName localhost"
    echo "DocumentRoot $WORK/htdocs"
    [[ $(id -u) != 0 ]] || echo "User nobody"
    [[ $(id -u) != 0 ]] || echo "Group $(id -gn nobody)"
}
{
    server_head httpd.pid error.log proxy proxy_http
    echo "SSLSessionCache shmcb:$WORK/ssl_scache(512000)"
    for k in "${KEYS[@]}"; do
        echo "Listen 127.0.0.1:${KEYPORT[$k]}"
        echo "<VirtualHost 127.0.0.1:${KEYPORT[$k]}>"
        echo "$SITE_TLS"
        echo "SSLCertificateFile $WORK/$k.crt"
        echo "SSLCertificateKeyFile $WORK/$k.key"
        echo "</VirtualHost>"
    done
    # A reverse proxy with the site's TLS in front of the back end: /tcp-jct/ over plain HTTP, /ssl-jct/ over TLS
    # with the back end's certificate verified (the WebSEAL study's TCP and SSL junctions).
    echo "Listen 127.0.0.1:$((PORT + 4))"
    echo "<VirtualHost 127.0.0.1:$((PORT + 4))>"
    echo "$SITE_TLS"
    echo "SSLCertificateFile $WORK/rsa2048.crt"
    echo "SSLCertificateKeyFile $WORK/rsa2048.key"
    echo "SSLProxyEngine on"
    echo "SSLProxyVerify require"
    echo "SSLProxyCACertificateFile $WORK/backend.crt"
    echo "ProxyPass /tcp-jct/ http://127.0.0.1:$((PORT + 5))/"
    echo "ProxyPass /ssl-jct/ https://localhost:$((PORT + 6))/"
    echo "</VirtualHost>"
} >"$WORK/httpd.conf"
# The back end: a second Apache with its own processes (its CPU time is not counted), plain and TLS ports.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    -keyout "$WORK/backend.key" -out "$WORK/backend.crt" 2>/dev/null
chmod a+r "$WORK/backend.key"
{
    server_head backend.pid backend-error.log
    echo "Listen 127.0.0.1:$((PORT + 5))"
    echo "Listen 127.0.0.1:$((PORT + 6))"
    echo "<VirtualHost 127.0.0.1:$((PORT + 6))>"
    echo "SSLEngine on"
    echo "SSLCertificateFile $WORK/backend.crt"
    echo "SSLCertificateKeyFile $WORK/backend.key"
    echo "</VirtualHost>"
} >"$WORK/backend.conf"
GROUPS_OPT=$(awk 'tolower($1) == "sslopensslconfcmd" && tolower($2) == "groups" {print $3}' <<<"$SITE_TLS")
for conf in httpd backend; do
    "$HTTPD" -t -f "$WORK/$conf.conf" 2>"$WORK/configtest" ||
        { cat "$WORK/configtest" >&2; echo "The generated $conf configuration does not parse (above)." >&2; exit 1; }
done
"$HTTPD" -f "$WORK/backend.conf" -k start

start_server() {  # $1: environment assignment for the server, or empty
    stop_server
    # shellcheck disable=SC2086 # $1 is one NAME=value word or nothing
    env ${1:-} "$HTTPD" -f "$WORK/httpd.conf" -k start
    for _ in $(seq 100); do
        curl -s -o /dev/null --cacert "$WORK/rsa2048.crt" "https://localhost:$PORT/4k.bin" \
            --resolve "localhost:$PORT:127.0.0.1" && return 0
        sleep 0.1
    done
    tail -5 "$WORK/error.log" >&2
    echo "The private server did not answer on 127.0.0.1:$PORT." >&2
    exit 1
}

cpu_ticks() {  # user+system time of the server's parent and its children, with children already reaped
    local parent total=0 p
    parent=$(cat "$WORK/httpd.pid")
    for p in "$parent" $(cat /proc/"$parent"/task/*/children 2>/dev/null); do
        [[ -r /proc/$p/stat ]] || continue
        total=$((total + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13 + $14 + $15}')))
    done
    echo "$total"
}
now() { date +%s.%N; }

speed() {  # $1 env, $2 algorithm or cipher, $3 "sign" or "bulk": operations or bytes per second on one core
    local out
    # shellcheck disable=SC2086
    if [[ $3 == sign ]]; then
        out=$(env ${1:-} openssl speed -seconds "$SECONDS_PER_TEST" -mr "$2" 2>/dev/null)
        awk -F: '/^\+F[24]:/ {print $4; exit}' <<<"$out"
    else
        out=$(env ${1:-} openssl speed -seconds "$SECONDS_PER_TEST" -mr -evp "$2" -bytes 16384 2>/dev/null)
        awk -F: '/^\+F:/ {print $4; exit}' <<<"$out"
    fi
}

negotiated() {  # cipher suite the client and the site agree on for key type $1
    openssl s_client -connect "127.0.0.1:${KEYPORT[$1]}" -brief </dev/null 2>&1 | awk -F': *' '/^Ciphersuite/ {print $2}'
}

handshakes() {  # $1 key type, $2 -new or -reuse, $3 a page to get or nothing: connections, seconds, resumed ones
    local out
    out=$(openssl s_time -connect "127.0.0.1:${KEYPORT[$1]}" "$2" -time "$SECONDS_PER_TEST" ${3:+-www "$3"} 2>/dev/null || true)
    awk '/connections in [0-9]+ real seconds/ {n = $1; s = $4}
         {r += gsub(/r/, "r", $0) * ($0 ~ /^[*r.0-9]+$/)}
         END {print n + 0, s + 0, r + 0}' <<<"$out"
}

bulk() {  # $1 payload: requests, bytes; one keep-alive connection per batch, until the time is up
    local url="https://localhost:$PORT/$1.bin" requests=0 bytes=0 t0 out
    t0=$(now)
    for _ in $(seq 1000); do
        out=$(for _ in $(seq "${BATCH[$1]}"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done |
            curl -s --cacert "$WORK/rsa2048.crt" --resolve "localhost:$PORT:127.0.0.1" -w '%{size_download}\n' -K -)
        requests=$((requests + $(wc -l <<<"$out")))
        bytes=$((bytes + $(awk '{s += $1} END {print s}' <<<"$out")))
        awk -v a="$t0" -v b="$(now)" -v s="$SECONDS_PER_TEST" 'BEGIN {exit !(b - a >= s)}' && break
    done
    echo "$requests $bytes"
}

junction() {  # $1 tcp or ssl: requests for the 5.8 KB page through that junction, keep-alive, until the time is up
    local url="https://localhost:$((PORT + 4))/$1-jct/5.8k.bin" requests=0 t0 out
    t0=$(now)
    for _ in $(seq 1000); do
        out=$(for _ in $(seq 200); do printf 'url = "%s"\noutput = "/dev/null"\n' "$url"; done |
            curl -s --cacert "$WORK/rsa2048.crt" --resolve "localhost:$((PORT + 4)):127.0.0.1" -w '%{http_code}\n' -K -)
        grep -qvx 200 <<<"$out" && { echo "The $1 junction answered $(grep -vx 200 <<<"$out" | head -n1), not 200: see $WORK/error.log." >&2; tail -3 "$WORK/error.log" >&2; exit 1; }
        requests=$((requests + $(wc -l <<<"$out")))
        awk -v a="$t0" -v b="$(now)" -v s="$SECONDS_PER_TEST" 'BEGIN {exit !(b - a >= s)}' && break
    done
    echo "$requests"
}

s_server_handshakes() {  # $1 env, $2 test name, then s_server options: full RSA-2048 handshakes per CPU-second
    local env=$1 test=$2 sserver c0 c1 t0 t1 n
    shift 2
    # shellcheck disable=SC2086 # $env is one NAME=value word or nothing
    env $env openssl s_server -accept "127.0.0.1:$((PORT + 3))" -cert "$WORK/rsa2048.crt" -key "$WORK/rsa2048.key" \
        -quiet "$@" </dev/null >/dev/null 2>&1 &
    sserver=$!
    for _ in $(seq 50); do listening $((PORT + 3)) && break; sleep 0.1; done
    c0=$(sed 's/^.*) //' "/proc/$sserver/stat" | awk '{print $12 + $13}'); t0=$(now)
    n=$(openssl s_time -connect "127.0.0.1:$((PORT + 3))" -new -time "$SECONDS_PER_TEST" 2>/dev/null | awk '/real seconds/ {print $1}')
    c1=$(sed 's/^.*) //' "/proc/$sserver/stat" | awk '{print $12 + $13}'); t1=$(now)
    kill "$sserver"; wait "$sserver" 2>/dev/null || true
    for _ in $(seq 100); do listening $((PORT + 3)) || break; sleep 0.1; done
    row "$(awk -v r="$run" -v s="$name" -v x="$test" -v n="${n:-0}" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v t="$TICK" -v bd="$bound2048" \
        'BEGIN {cpu = (c1 - c0) / t; printf "%s,%s,%s,rsa2048,,,%d,%.2f,%.2f,%.1f,handshakes per CPU-second,%.1f,signs per second on one core\n", r, s, x, n, b - a, cpu, (cpu > 0 ? n / cpu : 0), bd}')"
}

# One row per measurement and run.
RUNS_CSV=$OUT/runs.csv
echo "run,setup,test,key,payload,cipher,count,wall_seconds,server_cpu_seconds,per_cpu_second,unit,bound,bound_unit" >"$RUNS_CSV"
row() { echo "$1" >>"$RUNS_CSV"; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for run in $(seq "$RUNS"); do
    for s in "${SETUPS[@]}"; do
        name=${s%%:*} env=""
        [[ $s == *:* ]] && env=${s#*:}
        start_server "$env"
        for k in "${KEYS[@]}"; do
            cipher=$(negotiated "$k")
            bound=$(speed "$env" "${SPEEDALG[$k]}" sign)
            [[ $k != rsa2048 ]] || bound2048=$bound
            c0=$(cpu_ticks); t0=$(now)
            read -r n _ _ < <(handshakes "$k" -new)
            c1=$(cpu_ticks); t1=$(now)
            row "$(awk -v r="$run" -v s="$name" -v k="$k" -v c="$cipher" -v n="$n" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v t="$TICK" -v bd="$bound" \
                'BEGIN {cpu = (c1 - c0) / t; printf "%s,%s,full-handshake,%s,,%s,%d,%.2f,%.2f,%.1f,handshakes per CPU-second,%.1f,signs per second on one core\n", r, s, k, c, n, b - a, cpu, (cpu > 0 ? n / cpu : 0), bd}')"
        done
        # The same handshakes against openssl s_server with the same key and groups: the TLS library's own cost;
        # then its cheapest full handshake with this key (TLS 1.2, RSA key transport, no ECDHE): the floor.
        s_server_handshakes "$env" full-handshake-openssl-s_server ${GROUPS_OPT:+-groups "$GROUPS_OPT"}
        s_server_handshakes "$env" full-handshake-openssl-s_server-rsa-kex -tls1_2 -cipher AES128-GCM-SHA256
        cipher=$(negotiated rsa2048)
        for mode in -new -reuse; do  # with a small page: a TLS 1.3 client reads its session ticket after the handshake
            c0=$(cpu_ticks); t0=$(now)
            read -r n _ resumed < <(handshakes rsa2048 "$mode" /4k.bin)
            c1=$(cpu_ticks); t1=$(now)
            test="full-handshake-get-4k"
            if [[ $mode == -reuse ]]; then
                test="resumed-handshake-get-4k"
                ((resumed > 0)) || { echo "No session was resumed: the site does not allow session resumption." >&2; exit 1; }
            fi
            row "$(awk -v r="$run" -v s="$name" -v x="$test" -v c="$cipher" -v n="$n" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v t="$TICK" \
                'BEGIN {cpu = (c1 - c0) / t; printf "%s,%s,%s,rsa2048,,%s,%d,%.2f,%.2f,%.1f,handshakes per CPU-second,,\n", r, s, x, c, n, b - a, cpu, (cpu > 0 ? n / cpu : 0)}')"
        done
        case "$cipher" in *AES_256_GCM* | *AES256-GCM*) evp=aes-256-gcm ;; *AES_128_GCM* | *AES128-GCM*) evp=aes-128-gcm ;; *CHACHA20*) evp=chacha20-poly1305 ;; *) evp=aes-256-cbc ;; esac
        bound=$(speed "$env" "$evp" bulk)
        for p in 4k 32k 2.9m; do
            c0=$(cpu_ticks); t0=$(now)
            read -r n bytes < <(bulk "$p")
            c1=$(cpu_ticks); t1=$(now)
            row "$(awk -v r="$run" -v s="$name" -v p="$p" -v c="$cipher" -v n="$n" -v by="$bytes" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v t="$TICK" -v bd="$bound" \
                'BEGIN {cpu = (c1 - c0) / t; printf "%s,%s,bulk,rsa2048,%s,%s,%d,%.2f,%.2f,%.1f,MB per CPU-second,%.1f,MB per second on one core (16 KB blocks)\n", r, s, p, c, n, b - a, cpu, (cpu > 0 ? by / cpu / 1e6 : 0), bd / 1e6}')"
        done
        order=(tcp ssl); ((run % 2)) || order=(ssl tcp)   # alternate, so drift does not favour one junction
        for j in "${order[@]}"; do
            c0=$(cpu_ticks); t0=$(now)
            n=$(junction "$j")
            c1=$(cpu_ticks); t1=$(now)
            row "$(awk -v r="$run" -v s="$name" -v j="$j" -v c="$cipher" -v n="$n" -v a="$t0" -v b="$t1" -v c0="$c0" -v c1="$c1" -v t="$TICK" \
                'BEGIN {cpu = (c1 - c0) / t; printf "%s,%s,junction-%s,rsa2048,5.8k,%s,%d,%.2f,%.2f,%.1f,requests per CPU-second,,\n", r, s, j, c, n, b - a, cpu, (cpu > 0 ? n / cpu : 0)}')"
        done
    done
done
stop_server
stop_backend
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The CPU's crypto features the kernel reports: x86 flags, or the s390x facilities (msa = CPACF).
crypto_features() {
    local want
    case "$(uname -m)" in
        x86_64) want='aes|pclmulqdq|avx2|avx512f|avx512ifma|vaes|vpclmulqdq|sha_ni' ;;
        s390x) want='msa|vx|vxe|vxe2|vxp|dflt' ;;
        *) want='aes|sha[0-9]*|pmull' ;;
    esac
    awk -F': *' '/^(flags|features|Features)[[:space:]]*:/ {print $2; exit}' /proc/cpuinfo |
        tr ' ' '\n' | grep -Ex "$want" | tr '\n' ' ' | sed 's/ $//'
}

# The machine, and median and spread over the runs.
{
    echo "item,value"
    echo "cpu model,\"$(lscpu 2>/dev/null | awk -F': *' '/^Model name/ {print $2; exit}' || true)\""
    echo "cores,$(nproc)"
    echo "architecture,$(uname -m)"
    echo "kernel,$(uname -r)"
    echo "openssl,\"$(openssl version)\""
    echo "apache,\"$("$HTTPD" -v | awk -F': *' '/^Server version/ {print $2}')\""
    echo "site file,$(basename "$SITE")"
    echo "runs,$RUNS"
    echo "seconds per test,$SECONDS_PER_TEST"
    echo "load average before,$load_before"
    echo "load average after,$load_after"
    echo "crypto features,\"$(crypto_features)\""
    [[ -z $CEX_NOTE ]] || echo "crypto express path,\"none: $CEX_NOTE\""
} >"$OUT/machine.csv"
echo "setup,test,key,payload,cipher,runs,median,min,max,spread_percent,unit,bound_median,ratio_to_bound" >"$OUT/summary.csv"
tail -n +2 "$RUNS_CSV" | sort -t, -k2,2 -k3,3 -k4,4 -k5,5 -k10,10g | awk -F, '
    function flush() {
        if (!n) return
        med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        bsum = 0; for (i = 1; i <= n; i++) bsum += bd[i]
        bm = bsum / n
        printf "%s,%s,%s,%s,%s,%d,%.1f,%.1f,%.1f,%.1f,%s,%s,%s\n", g2, g3, g4, g5, g6, n, med, v[1], v[n],
            (med > 0 ? 100 * (v[n] - v[1]) / med : 0), g11, (bm > 0 ? sprintf("%.1f", bm) : ""),
            (bm > 0 ? sprintf("%.3f", med / bm) : "")
        n = 0
    }
    { key = $2 FS $3 FS $4 FS $5
      if (key != last) { flush(); last = key }
      g2 = $2; g3 = $3; g4 = $4; g5 = $5; g6 = $6; g11 = $11
      v[++n] = $10; bd[n] = $12 }
    END { flush() }' >>"$OUT/summary.csv"

echo "TLS on $(uname -m), $(nproc) cores, $(openssl version | cut -d' ' -f1-2), $RUNS run(s) of $SECONDS_PER_TEST s per test, median over the runs"
awk -F, 'NR > 1 {
    what = ($2 == "bulk") ? "bulk " $4 : ($2 ~ /^junction-/) ? $2 " " $4 : $2 " " $3
    printf "%-12s %-48s %9s %s (spread %s %%)", $1, what, $7, $11, $10
    if ($13 != "") printf ", %s of the bound %s", $13, $12
    printf "\n" }' "$OUT/summary.csv"
[[ -z $CEX_NOTE ]] || echo "Note: $CEX_NOTE"
echo "Files: $OUT/summary.csv, $OUT/runs.csv, $OUT/machine.csv"
