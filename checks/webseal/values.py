"""Values the WebSEAL pages state, read from the snippets so that a page never types them twice."""

from pathlib import Path

from checks.webseal import stanza

ROOT = Path(__file__).resolve().parents[2]
CONF = "snippets/webseal/conf/webseald-pkcs11-current.conf"
DEPENDS_ON = [CONF, "snippets/webseal/token/create-webseal-certificate.sh",
              "snippets/webseal/apache/ssl-junction-cost.csv"]


def _conf() -> dict:
    return stanza.entries((ROOT / CONF).read_text(encoding="utf-8"))


def token_label() -> str:
    return _conf()[("ssl", "pkcs11-token-label")][0]


def cert_label() -> str:
    return _conf()[("ssl", "webseal-cert-keyfile-label")][0].split(":", 1)[1]


def keyfile_label() -> str:
    return _conf()[("ssl", "webseal-cert-keyfile-label")][0]


def webseal_user() -> str:
    return _conf()[("server", "unix-user")][0]


COST = "snippets/webseal/apache/ssl-junction-cost.csv"


def _summary(row: str) -> tuple[str, str]:
    import csv

    with open(ROOT / COST, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["row"] == row:
                median, spread = r["ssl_over_tcp"].split(" (spread ")
                return median, spread.rstrip(")")
    raise LookupError(f"{row} not in {COST}")


def ssl_junction_throughput() -> str:
    median, spread = _summary("median-throughput-ratio")
    return f"{100 * float(median):.0f} % of the TCP junction's (spread {spread} over the runs)"


def ssl_junction_cpu() -> str:
    median, spread = _summary("median-cpu-per-request-ratio")
    return f"{100 * (float(median) - 1):+.0f} % (spread {spread})"


def ssl_junction_runs() -> str:
    import csv

    with open(ROOT / COST, newline="", encoding="utf-8") as fh:
        runs = [r for r in csv.DictReader(fh) if r["row"] == "run"]
    return f"{len({r['run'] for r in runs})} runs of {runs[0]['requests']} requests per junction"
