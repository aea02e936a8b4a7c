"""The runbook steps ``make verify`` checks on a user's hosts, and how each is run there.

A verify step is a read-only check a page shows its reader: the same snippet file the container checks run
for that step's outcome, run over SSH with the site profile's values. Each step names the page and the
label of the place on it (``(verify-ID)=`` before the snippet, so a report links straight to it); the
server (a ``[servers.X]`` table of the profile, or ``crypto``) whose inventory groups it applies to; the
user it runs as; and the environment and arguments it gets from the profile.

``OUTCOMES_NOT_VERIFIED`` covers every ``{outcome}`` check of the guide that is not a verify step, with the
reason: verify must not change a host, so a step that installs or loads something is not run on a fleet.
checks/verify/test_verify_steps.py holds both lists against the pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from zrunbook.crypto import fixed_versions
from zrunbook.verify.profile import DEFAULT_CONNECTIONS, SERVER_KEYS, Profile, Token

SERVER_PARTS = SERVER_KEYS

LOGIN, ROOT, SERVICE = "login user", "root", "server user"


@dataclass(frozen=True)
class Step:
    id: str  # also the page's label: (verify-ID)=
    page: str  # docname
    title: str  # what a pass proves, in the report
    part: str  # a server key of the profile, or "crypto"
    snippet: str  # under snippets/
    run_as: str  # LOGIN, ROOT or SERVICE (the server's user, through sudo -u)
    env: tuple[str, ...]  # what the snippet reads: SLOT, TOKEN_USER_PIN, SERVICE_USER, CA_FILE, SIGALGS, ...
    args: tuple[str, ...]  # "endpoint", "server_name", "connections", "fixed_versions" (the table's rows)
    changes: str = ""  # what running it changes on the host besides logs and counters ("" = nothing)

    @property
    def label(self) -> str:
        return f"verify-{self.id}"

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(name for name in self.env if name == "TOKEN_USER_PIN")


def _server_steps(server: str, page: str, title: str) -> list[Step]:
    return [
        Step(f"{server}-key-in-token", page, f"{title}: the key of the certificate it presents is in the token, "
             "private, sensitive, never extractable", server, "crypto/verify/check-key-in-token.sh", SERVICE,
             ("SLOT", "TOKEN_USER_PIN", "SERVER_NAME", "SIGALGS"), ("endpoint",)),
        Step(f"{server}-token-signs", page, f"{title}: each new TLS connection makes the token sign", server,
             "crypto/verify/check-token-signs.sh", ROOT, ("SERVICE_USER", "SLOT", "CA_FILE", "SERVER_NAME",
                                                                       "SIGALGS"),
             ("endpoint", "connections")),
    ]


STEPS: tuple[Step, ...] = (
    Step("crypto-ap-ready", "how-to/crypto/01-adapters", "the guest has AP queues and zcrypt serves them", "crypto",
         "crypto/adapters/check-ap-ready.sh", LOGIN, ("AP_WAIT_SECONDS",), ()),
    Step("crypto-fixed-versions", "how-to/crypto/03-opencryptoki", "openCryptoki and pkcs11-provider are at or above "
         "the fixed version of each advisory the runbook's table confirms for this distribution", "crypto",
         "crypto/verify/check-fixed-versions.sh", LOGIN, (), ("fixed_versions",)),
    Step("verify-account-sudo", "how-to/verify-your-fleet", "verify's login account can run through sudo only "
         "pkcsconf -t and the runbook's checks, and is not root", "crypto", "verify/check-verify-sudo.sh", LOGIN,
         (), ()),
    *_server_steps("apache", "how-to/ihs/05-apache-pkcs11-provider", "Apache httpd"),
    Step("apache-protocols", "how-to/ihs/05-apache-pkcs11-provider", "Apache httpd: it answers no handshake that "
         "offers only TLS 1.0 or 1.1, and serves TLS 1.2 or 1.3", "apache", "crypto/verify/check-tls-protocols.sh",
         LOGIN, ("SERVER_NAME", "SIGALGS"), ("endpoint",)),
    Step("apache-hybrid-group", "how-to/ihs/05-apache-pkcs11-provider", "Apache httpd: it agrees to the hybrid "
         "post-quantum key exchange X25519MLKEM768 over TLS 1.3", "apache", "crypto/verify/check-hybrid-group.sh",
         LOGIN, ("SERVER_NAME", "SIGALGS"), ("endpoint",)),
    Step("apache-site-files", "how-to/ihs/05-apache-pkcs11-provider", "Apache httpd: its OpenSSL configuration "
         "includes the system's policy, and its PIN file is root's alone", "apache",
         "ihs/apache/check-token-site-files.sh", ROOT, (), ()),
    Step("apache-hsts", "how-to/ihs/05-apache-pkcs11-provider", "Apache httpd: its answers tell browsers to use "
         "HTTPS only for a year or more (Strict-Transport-Security)", "apache", "ihs/apache/check-hsts.sh", LOGIN,
         ("CA_FILE", "SIGALGS"), ("endpoint", "server_name")),
    Step("apache-certificate-expiry", "how-to/operate-the-fleet", "Apache httpd: the certificate it serves is "
         "for its name and not past three quarters of its lifetime", "apache",
         "monitor/check-certificate-expiry.sh", LOGIN,
         ("CA_FILE", "SIGALGS"), ("endpoint", "server_name")),
    Step("apache-session-resumption", "how-to/ihs/07-session-cache", "Apache httpd: returning clients resume "
         "their sessions (TLS 1.2 and 1.3)", "apache", "ihs/apache/check-session-resumption.sh", LOGIN,
         ("CA_FILE", "SIGALGS"), ("endpoint", "server_name")),
    *_server_steps("was", "how-to/was/05-pkcs11-provider", "WebSphere"),
    *_server_steps("liberty", "how-to/was/08-liberty", "Liberty"),
    *_server_steps("ihs", "how-to/ihs/03-httpd-conf-ssl", "IHS"),
    Step("ihs-bulk-cipher-in-libica", "how-to/ihs/03-httpd-conf-ssl", "IHS: the bulk cipher of its TLS records "
         "runs in libica on CPACF", "ihs", "crypto/verify/check-bulk-cipher-in-libica.sh", ROOT, ("CA_FILE",),
         ("endpoint",)),
    *_server_steps("webseal", "how-to/webseal/02-webseald-configuration", "WebSEAL"),
    Step("webseal-bulk-cipher-in-libica", "how-to/webseal/02-webseald-configuration", "WebSEAL: the bulk cipher "
         "of its TLS records runs in libica on CPACF", "webseal", "crypto/verify/check-bulk-cipher-in-libica.sh",
         ROOT, ("CA_FILE",), ("endpoint",)),
)

BY_ID = {step.id: step for step in STEPS}

# Outcome checks of the guide that verify does not run, and why (checks/verify/test_verify_steps.py requires
# every {outcome} snippet to be a verify step or listed here).
OUTCOMES_NOT_VERIFIED = {
    "daytwo/clear-pin-count.sh": "its one login is the point: it clears a count that verify reads and never logs "
                                 "past, and at the final try a wrong PIN locks the token; run it by hand once the "
                                 "holder of the wrong PIN is stopped",
    "ihs/apache/check-token-fips.sh": "it applies only to a site the page has switched to FIPS mode, with that "
                                      "mode's own OpenSSL configuration; run it from the page after the switch",
    "daytwo/switch-token-certificate.sh": "it changes the server (a new certificate and a graceful reload), and "
                                          "verify changes nothing; run it from the day-two page",
    "daytwo/acme/renew-token-certificate-acme.sh": "it makes a key, orders a certificate and reloads the server, and "
                                                   "verify changes nothing; its own outcome checks are verify's key "
                                                   "and signing steps",
    "daytwo/install-snippet-bundle.sh": "it installs files on the host it runs on; verify changes nothing",
    "daytwo/acme/renew-token-certificate.cron": "a cron file, run in cron's environment by the checks; it starts the "
                                                "renewal, which changes the host",
    "daytwo/acme/renew-token-certificate.service": "a systemd unit, checked by systemd-analyze; it starts the "
                                                   "renewal, which changes the server",
    "daytwo/acme/renew-token-certificate.timer": "a systemd unit, checked on a booted host; it starts the renewal, "
                                                 "which changes the server",
    "monitor/zrunbook-textfile.service": "a systemd unit, checked by systemd-analyze and walked on a booted host; "
                                         "it writes the metrics file, and verify changes nothing",
    "daytwo/liberty-token-key.sh": "it stops and starts the Liberty server with another key, and verify changes "
                                   "nothing; run it from the day-two page",
    "daytwo/restore-token.sh": "it replaces a token's folder and restarts the slot daemon, and verify changes "
                               "nothing; run it from the page on the host that gets the token",
    "ihs/apache/check-cold-start.sh": "it means something only right after httpd starts or restarts, and verify never "
                                      "restarts a service; run it from the page after each restart",
    "db2/kernel/load-ipc-sysctl.sh": "it installs a sysctl file and loads it: verify changes nothing on a host",
    "db2/tls/test-jdbc-tls-connection.sh": "it needs IBM's JDBC driver and a Db2 user's password on the host, which "
                                           "verify does not bring; run it from the page",
    "db2/tls/test-cli-tls-connection.sh": "it needs IBM's CLI driver and a Db2 user's password on the host, which "
                                          "verify does not bring; run it from the page",
    "crypto/secure-key/check-secure-key-token.sh": "the site profile names no CCA or EP11 token slot yet, and no check "
                                                   "host has one to prove the passing case; run it from the page",
    "monitor/zrunbook-alerts.test.yml": "it tests the alert rules with promtool where Prometheus's rules are kept, "
                                        "not on a server host; run it there after each change of the rules",
    "monitor/zrunbook-alerts.yml": "its outcome is the rules' agreement with the renewal schedule, checked with "
                                   "promtool where Prometheus's rules are kept, not on a server host",
    "daytwo/check-pin-rotated.sh": "it logs in with the old PIN on purpose and counts a failed login, which verify "
                                   "never does; run it from the PIN rotation page right after a rotation",
    "daytwo/check-pin-file.sh": "it needs the token's user PIN as root, and verify's sudo rules give the PIN only to "
                                "the key check, run as the server's user; run it from the PIN rotation page",
    "crypto/fips/check-openssl-fips.sh": "the site profile does not record which services run in FIPS mode and with "
                                         "which OpenSSL configuration; run it from the page",
}


def applies(step: Step, profile: Profile, groups: set[str]) -> str | None:
    """None when the step applies to a host in these inventory groups, else why not (the report's 'not
    applicable' reason)."""
    if step.part != "crypto" and profile.server(step.part) is None:
        return f"the site profile has no [servers.{step.part}] table"
    if step.part == "crypto" and "crypto" not in profile.data:
        return "the site profile has no [crypto] table"
    wanted = profile.groups(step.part)
    if not groups & set(wanted):
        table = "crypto" if step.part == "crypto" else f"servers.{step.part}"
        return f"the host is in none of [{table}] groups ({', '.join(wanted)})"
    return None


def setting(profile: Profile, part: str, hostvars: dict) -> dict:
    """The profile's table for a server (or "crypto") as one host sees it: a host variable
    ``zrunbook_<part>_<key>`` (for example ``zrunbook_apache_endpoint``) overrides the profile's value."""
    table = dict(profile.data.get("crypto", {}) if part == "crypto" else profile.server(part) or {})
    prefix = f"zrunbook_{part}_"
    table.update({k.removeprefix(prefix): v for k, v in hostvars.items() if k.startswith(prefix)})
    return table


def token_of(profile: Profile, part: str, hostvars: dict) -> tuple[Token | None, str]:
    """The token a server uses on one host (its ``token``, or the host's ``zrunbook_<part>_token``); None and why
    when the name is no [tokens.NAME] table, or for "crypto"."""
    if part == "crypto":
        return None, "the crypto steps use no token"
    name = setting(profile, part, hostvars).get("token", "")
    token = profile.token(name)
    if token is None:
        return None, (f"the token {name!r} (servers.{part}.token or the host's zrunbook_{part}_token) names no "
                      f"[tokens.{name}] table of the site profile (it has {', '.join(sorted(profile.tokens))})")
    return token, ""


def values(step: Step, profile: Profile, slot: str | None, pin: str | None, hostvars: dict) -> tuple[dict, list[str]]:
    """The step's environment and arguments on one host (``setting``)."""
    table = setting(profile, step.part, hostvars)
    source = {"SLOT": slot, "TOKEN_USER_PIN": pin, "SERVICE_USER": table.get("user"), "CA_FILE": table.get("ca_file"),
              "SIGALGS": table.get("sigalgs"), "AP_WAIT_SECONDS": table.get("ap_wait_seconds"),
              "SERVER_NAME": table.get("server_name")}
    env = {name: str(source[name]) for name in step.env if source.get(name) not in (None, "")}
    endpoint = table.get("endpoint", "")
    arg_values = {"endpoint": [endpoint], "server_name": [table.get("server_name") or endpoint.rsplit(":", 1)[0]],
                  "connections": [str(table.get("connections", DEFAULT_CONNECTIONS))]}
    if "fixed_versions" in step.args:
        arg_values["fixed_versions"] = fixed_versions.arguments()
    return env, [value for a in step.args for value in arg_values[a]]
