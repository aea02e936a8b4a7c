"""The Apache SSL-junction analogue on a container host, set up from the snippets, and a small measurement.

``serve(host)`` builds on the IHS chapter's Apache helpers: pkcsslotd, the token, the proxy user in
pkcs11, the key in the token and its CSR, all with the crypto and IHS chapters' snippets; a test CA signs
the front certificate and the back end's. The back end (the study's WebSphere) is test scaffolding: a
second httpd instance in the same container on 127.0.0.1:9443 (TLS, key in a file) and :9080 (clear),
named was.example.com through /etc/hosts. Then the junction site snippet is enabled and httpd started.

``measure(host, junction, requests)`` fetches the 5.8 KB page of the study through one junction over one
keep-alive connection and returns (seconds, requests per second, front-end CPU milliseconds per request),
the CPU read from /proc for the front httpd's processes only (the back end runs in another instance).
"""

from __future__ import annotations

import re

from checks.hosts.apache import CA, enable_site, start, token_key
from checks.hosts.steps import run_snippet
from checks.hosts.util import ok

SITE = "webseal/apache/apache-ssl-junction.conf"
BACKEND = "/etc/zr-backend"
PAGE_BYTES = 5939  # the study's 5.8 KB page
BACKEND_CONF = f"""ServerRoot {BACKEND}
PidFile {BACKEND}/httpd.pid
ErrorLog {BACKEND}/error.log
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule ssl_module /usr/lib/apache2/modules/mod_ssl.so
LoadModule socache_shmcb_module /usr/lib/apache2/modules/mod_socache_shmcb.so
User www-data
Group www-data
ServerName was.example.com
DocumentRoot /srv/backend
SSLSessionCache shmcb:{BACKEND}/scache(512000)
LogFormat "%p %H %m %U %s" junction
Listen 127.0.0.1:9080
Listen 127.0.0.1:9443
<VirtualHost 127.0.0.1:9080>
    CustomLog {BACKEND}/access.log junction
</VirtualHost>
<VirtualHost 127.0.0.1:9443>
    SSLEngine on
    SSLProtocol -all +TLSv1.2 +TLSv1.3
    SSLCertificateFile {BACKEND}/was.crt
    SSLCertificateKeyFile {BACKEND}/was.key
    CustomLog {BACKEND}/access.log junction
</VirtualHost>
"""


def backend(host, ca_dir: str = CA) -> None:
    """The back end, its certificate signed by the CA in ca_dir (the test CA unless a test swaps it)."""
    ok(host, f"mkdir -p {BACKEND} /srv/backend && head -c {PAGE_BYTES} /dev/urandom > /srv/backend/page-5.8k.html"
              " && head -c 12288 /dev/urandom > /srv/backend/page-12k.html && chmod -R a+r /srv/backend")
    ok(host, "grep -q was.example.com /etc/hosts || echo '127.0.0.1 was.example.com' >> /etc/hosts")
    ok(host, f"cd {BACKEND} && openssl req -new -newkey rsa:2048 -nodes -keyout was.key -subj /CN=was.example.com "
              "-addext subjectAltName=DNS:was.example.com -out was.csr 2>/dev/null"
              f" && cd {ca_dir} && openssl x509 -req -in {BACKEND}/was.csr -CA ca.crt -CAkey ca.key -days 30 "
              f"-copy_extensions copy -out {BACKEND}/was.crt 2>/dev/null")
    host.run(f"test -s {BACKEND}/httpd.pid && apache2 -f {BACKEND}/httpd.conf -k stop; sleep 0.5")
    ok(host, f"cat > {BACKEND}/httpd.conf <<'EOF'\n{BACKEND_CONF}EOF")
    ok(host, f"apache2 -f {BACKEND}/httpd.conf -k start 2>&1")
    for _ in range(50):
        if host.run("ss -Hltn 'sport = :9443' | grep -q 9443").rc == 0:
            return
        host.run("sleep 0.2")
    raise AssertionError("the back end did not listen on 9443:\n" + host.run(f"cat {BACKEND}/error.log").stdout)


def serve(host) -> str:
    ca = token_key(host)
    ok(host, f"cp {ca} /etc/ssl/certs/backend-ca.crt")
    backend(host)
    res = run_snippet(host, "webseal/apache/enable-proxy-modules.sh")
    assert res.rc == 0, res.stdout + res.stderr
    enable_site(host, SITE)
    start(host)
    return ca


def get(host, ca: str, path: str, *extra: str):
    opts = " ".join(extra)
    return host.run(f"curl -sS --cacert {ca} --resolve www.example.com:443:127.0.0.1 {opts} "
                    f"-o /tmp/got -w '%{{http_code}} %{{size_download}}' https://www.example.com{path}")


MEASURE = r"""
pids() { pgrep -f '^/usr/sbin/apache2 -k start' ; }
ticks() {
    local t=0 p
    for p in $(pids); do
        [ -r /proc/$p/stat ] && t=$((t + $(sed 's/^.*) //' /proc/$p/stat | awk '{print $12+$13+$14+$15}')))
    done
    echo $t
}
for i in $(seq @N@); do
    printf 'url = "https://www.example.com/@JCT@/page-5.8k.html"\noutput = "/dev/null"\n'
done > /tmp/urls
c0=$(ticks); t0=$(date +%s.%N)
curl -s -K /tmp/urls --cacert @CA@ --resolve www.example.com:443:127.0.0.1 -w '%{http_code}\n' | grep -c '^200$'
t1=$(date +%s.%N); c1=$(ticks)
echo "$t0 $t1 $c0 $c1 $(getconf CLK_TCK)"
"""


def measure(host, ca: str, junction: str, requests: int) -> tuple[float, float, float]:
    script = MEASURE.replace("@N@", str(requests)).replace("@JCT@", junction).replace("@CA@", ca)
    out = ok(host, "bash <<'ZR'\n" + script + "ZR")
    ok_line, nums = out.strip().splitlines()[-2:]
    assert int(ok_line) == requests, f"only {ok_line} of {requests} requests through /{junction}/ returned 200"
    t0, t1, c0, c1, tck = (float(x) for x in re.split(r"\s+", nums))
    seconds = t1 - t0
    return seconds, requests / seconds, 1000 * (c1 - c0) / tck / requests
