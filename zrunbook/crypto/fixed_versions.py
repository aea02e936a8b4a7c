"""The arguments of snippets/crypto/verify/check-fixed-versions.sh, from facts/crypto/fixed-versions.csv.

Each row that names a release (its ``os-release`` cell, "ID VERSION_ID" as /etc/os-release spells them) and a
fixed version, or "none" where the release has no fixed package, becomes four arguments: release, CVE,
package, fixed version. Rows whose fixed version is not confirmed name no release and are left out, so the
check says the table has nothing confirmed for such a host instead of passing it.
"""

from __future__ import annotations

from zrunbook import facts

TABLE = "crypto/fixed-versions"


def arguments() -> list[str]:
    out: list[str] = []
    for row in facts.table(TABLE):
        if row["os-release"]:
            out += [row["os-release"], row["cve"], row["component"], row["fixed version"]]
    return out
