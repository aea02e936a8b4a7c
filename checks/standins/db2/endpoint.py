"""The recording TLS endpoint the Db2 chapter's client checks connect to, on a container host (a testinfra host):
``openssl s_server -msg`` completes the handshake, writes every handshake message in hex (the ClientHello is what
zrunbook/db2/client_hello.py reads) and then speaks no Db2 protocol. ``pki`` makes the certificates it serves.
"""

from __future__ import annotations

# A CA, a server certificate it signed for localhost, one it signed for another name, and another CA the server has
# nothing to do with.
PKI = """mkdir -p {work} && cd {work} &&
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=zrunbook-db2-ca &&
    for name in localhost db2-other.example.com; do
      openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "/CN=$name" &&
      printf 'subjectAltName=DNS:%s\\n' "$name" > "$name.ext" &&
      openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile "$name.ext" \\
        -out "$name.pem" || exit 1
    done &&
    ln -sf localhost.pem server.pem && ln -sf localhost.key server.key &&
    openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 2 -subj /CN=another-ca"""


def pki(host, work: str) -> None:
    """In ``work``: ca.pem; server.pem/.key (localhost, signed by ca.pem); db2-other.example.com.pem/.key (signed by
    ca.pem, another name); other.pem (another CA)."""
    host.run_expect([0], PKI.format(work=work))


def recorded(host, work: str, port: int, client: str, *, cert: str = "server", server_args: str = "",
             hold: int = 6):
    """Runs the shell command ``client`` against a one-connection endpoint on ``port`` serving ``work/cert.pem``;
    returns (the client's result, the endpoint's -msg output). The endpoint closes ``hold`` seconds after it starts
    (its stdin, a sleep, ends then): long enough for a handshake, and the time a client that got through it waits
    for a Db2 reply that never comes."""
    # setsid: the endpoint outlives this exec session (otherwise its stdin, the sleep, ends with it, and s_server
    # drops the connection mid-handshake)
    host.run_expect([0], f"setsid sh -c 'sleep {hold} | openssl s_server -accept {port} -cert {work}/{cert}.pem "
                         f"-key {work}/{cert}.key -msg -naccept 1 {server_args} > {work}/hello.txt 2>&1' "
                         "</dev/null >/dev/null 2>&1 &")
    host.run_expect([0], f"for i in $(seq 100); do ss -ltn | grep -q ':{port} ' && exit 0; sleep 0.1; done; exit 1")
    result = host.run(client)
    # a client that never connected (refused its own configuration) leaves the endpoint waiting: one empty
    # connection ends it; after a client that did connect it only waits in the queue until the endpoint exits
    host.run(f"bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'")
    host.run_expect([0], f"for i in $(seq 200); do ss -ltn | grep -q ':{port} ' || exit 0; sleep 0.1; done; exit 1")
    return result, host.file(f"{work}/hello.txt").content.decode("latin-1")  # s_server echoes the client's bytes
