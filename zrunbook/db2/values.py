"""Numbers the Db2 pages state, computed at build time from the snippets (never typed in the prose).

Used as {value}`db2:<function>` on the pages. Each function parses a snippet with the same code the
checks use (zrunbook/formats/clp.py, zrunbook/db2/ipc.py) and returns the text to show.
"""

from __future__ import annotations

from zrunbook import SNIPPETS
from zrunbook.db2 import ipc
from zrunbook.formats import clp

LOGS = "db2/logs/set-log-params.clp"
LOGS_2013 = "db2/logs/set-log-params-2013.sh"
BUFFER_POOL = "db2/bufferpool/set-buffer-pool.clp"
BUFFER_POOL_2013 = "db2/bufferpool/set-buffer-pool-2013.sh"
IPC_CURRENT = ipc.CURRENT_CONF
IPC_2013 = ipc.STUDY_CONF
TLS = "db2/tls/enable-tls.sh"
JDBC = "db2/tls/jdbc-tls.properties"
DEPENDS_ON = [f"snippets/{p}" for p in (LOGS, LOGS_2013, BUFFER_POOL, BUFFER_POOL_2013, IPC_CURRENT, IPC_2013, TLS,
                                          JDBC)] + [
    "facts/db2/ipc-minimums.csv", "facts/db2/clp-keywords.csv"]

PAGE = 4096  # LOGFILSIZ is in 4 KiB pages; IBMDEFAULTBP uses the database page size, 4 KiB by default
GIB = 1 << 30


def _gib(nbytes: int) -> str:
    value = nbytes / GIB
    return f"{value:g} GiB" if value == int(value) else f"{value:.2f} GiB"


def _parsed(rel: str, version: str) -> list[clp.Command]:
    parsed, problems = clp.commands((SNIPPETS / rel).read_text(encoding="utf-8"), version)
    if problems:
        raise ValueError(f"snippets/{rel}: {problems}")
    return parsed


def log_settings(rel: str = LOGS, version: str = "current") -> tuple[int, int, int]:
    """(LOGFILSIZ, LOGPRIMARY, LOGSECOND) that the snippet leaves for its database."""
    (params,) = clp.db_cfg(_parsed(rel, version)).values()
    return int(params["LOGFILSIZ"]), int(params["LOGPRIMARY"]), int(params["LOGSECOND"])


def log_bytes(rel: str = LOGS, version: str = "current") -> tuple[int, int]:
    """(primary log space, maximum log space with all secondary files) in bytes."""
    size, primary, second = log_settings(rel, version)
    return primary * size * PAGE, (primary + max(second, 0)) * size * PAGE


def total_log_space() -> str:
    return _gib(log_bytes()[0])


def total_log_space_2013() -> str:
    return _gib(log_bytes(LOGS_2013, "9.7")[0])


def log_file_size() -> str:
    return _gib(log_settings()[0] * PAGE)


def log_file_count() -> str:
    return str(log_settings()[1])


def buffer_pool_bytes(rel: str = BUFFER_POOL, version: str = "current") -> int:
    sizes = [int(c.params["SIZE"]) for c in _parsed(rel, version) if c.name == "alter-bufferpool"]
    if len(sizes) != 1:
        raise ValueError(f"snippets/{rel}: expected one ALTER BUFFERPOOL ... SIZE n, found {len(sizes)}")
    return sizes[0] * PAGE


def buffer_pool_size() -> str:
    return _gib(buffer_pool_bytes())


def buffer_pool_size_2013() -> str:
    return _gib(buffer_pool_bytes(BUFFER_POOL_2013, "9.7"))


def ipc_ram_gb() -> str:
    return f"{ipc.stated_ram_gb(IPC_CURRENT)} GB"


def ipc_ram_gb_2013() -> str:
    return f"{ipc.stated_ram_gb(IPC_2013)} GB"


def ipc_keys_set() -> str:
    """The sysctl keys the current snippet sets, as inline text."""
    return ", ".join(ipc.conf_values(IPC_CURRENT))


def ipc_largest_ram_gb() -> str:
    return f"{ipc.largest_ram_gb_within_kernel_limits()} GB"


LSDASD = "db2/disks/lsdasd-s-hyperpav.out"
DEPENDS_ON.append(f"snippets/{LSDASD}")


def _lsdasd():
    from zrunbook.formats import lsdasd
    return lsdasd.parse((SNIPPETS / LSDASD).read_text(encoding="utf-8"))


def hyperpav_alias_count() -> str:
    return str(sum(d.status == "alias" for d in _lsdasd()))


def dasd_cylinders() -> str:
    from zrunbook.formats import lsdasd
    (base,) = [d for d in _lsdasd() if d.status != "alias"]
    return f"{base.blocks // lsdasd.BLOCKS_PER_CYLINDER}"


def dasd_size_gib() -> str:
    (base,) = [d for d in _lsdasd() if d.status != "alias"]
    return f"{base.blocks * base.blksz / GIB:.1f} GiB"


# --- TLS (the server script and the driver's properties) -----------------------------------------------------


def tls_settings() -> dict[str, str]:
    """The UPDATE DBM CFG values the server page's script leaves (later values winning)."""
    settings: dict[str, str] = {}
    for cmd in _parsed(TLS, "current"):
        if cmd.name == "dbm-cfg":
            settings.update(cmd.params)
    return settings


def _names(words: str) -> str:
    items = [w.strip() for w in words.split(",") if w.strip()]
    return ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]


def tls_port() -> str:
    return tls_settings()["SSL_SVCENAME"]


def plain_port() -> str:
    return tls_settings()["SVCENAME"]


def tls_versions() -> str:
    words = {"TLSV13": "TLS 1.3", "TLSV12": "TLS 1.2", "TLSV1": "TLS 1.0 and 1.1"}
    return " and ".join(words[v] for v in tls_settings()["SSL_VERSIONS"].upper().split(","))


def tls_cipherspecs() -> str:
    return _names(tls_settings()["SSL_CIPHERSPECS"])


def jdbc_cipher_suites() -> str:
    import javaproperties

    props = javaproperties.loads((SNIPPETS / JDBC).read_text(encoding="utf-8"))
    return _names(props["sslCipherSuites"])


# --- the CLI driver the checks run (zrunbook/clidriver.py: pinned, and its levels asserted by the checks) -------


def cli_driver_level() -> str:
    from zrunbook import clidriver

    return clidriver.DB2_LEVEL.split()[-1].lstrip("v")


def cli_gskit_level() -> str:
    from zrunbook import clidriver

    return clidriver.GSKIT


def cli_wheel() -> str:
    from zrunbook import clidriver

    return f"ibm_db {clidriver.VERSION}"


# The key-exchange groups db2cli's GSKit offers as a TLS 1.3 client (supported_groups, in its order), asserted by
# checks/db2/test_db2_cli_tls.py (test_db2cli_offers_only_classical_key_exchange_groups); the post-quantum page
# quotes it.
GSKIT_CLIENT_GROUPS = ("x25519", "secp256r1", "secp384r1", "secp521r1", "x448")


def cli_gskit_client_groups() -> str:
    return ", ".join(GSKIT_CLIENT_GROUPS)
