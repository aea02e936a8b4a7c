"""When a certificate is renewed and when its expiry alert fires: one schedule, as fractions of its lifetime.

The renewal step (snippets/daytwo/acme/renew-token-certificate-acme.sh --when-due) renews once RENEW_AT of the
served certificate's lifetime has passed, computed from its own notBefore and notAfter; the monitoring page's
CertificateExpiresSoon (snippets/monitor/zrunbook-alerts.yml) fires once EXPIRY_ALERT_AT has passed, so it never
fires while a renewal is not yet due, and it leaves the renewal's runs and retries RETRY_SHARE of the lifetime
first. The snippets cannot import this module: checks/daytwo/test_renewal_schedule.py holds them to it (the
script's arithmetic, the rule's expression, the lifetimes table's renewal day) and runs promtool on both alerts at
the points these fractions give for every lifetime in facts/daytwo/certificate-lifetimes.csv.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from zrunbook import ROOT

RENEW_AT = Fraction(2, 3)
EXPIRY_ALERT_AT = Fraction(3, 4)
RETRY_SHARE = EXPIRY_ALERT_AT - RENEW_AT
FAILING_FOR = "1h"  # CertificateRenewalFailing's for: the service's retries at 15 and 45 minutes failed too
LIFETIMES = ROOT / "facts/daytwo/certificate-lifetimes.csv"
LIFETIME_COLUMN = "longest lifetime of a public TLS certificate (days)"
RENEWAL_COLUMN = "renewal at two thirds of it (day)"
DAY = 86400


def lifetimes(path: Path = LIFETIMES) -> list[dict[str, str]]:
    from zrunbook import facts

    return facts.load(path)


def renewal_seconds(lifetime_days: int) -> int:
    """Seconds after notBefore at which the renewal is due, as the script's integer arithmetic computes it."""
    span = lifetime_days * DAY
    return span * RENEW_AT.numerator // RENEW_AT.denominator


def alert_seconds(lifetime_days: int) -> Fraction:
    """Seconds after notBefore from which CertificateExpiresSoon fires."""
    return lifetime_days * DAY * EXPIRY_ALERT_AT


def days(seconds: float) -> str:
    """A duration in days with up to two decimals, as the page states it (31.33)."""
    return f"{float(seconds) / DAY:.2f}".rstrip("0").rstrip(".")


def words(fraction: Fraction) -> str:
    names = {Fraction(2, 3): "two thirds", Fraction(3, 4): "three quarters", Fraction(1, 12): "a twelfth",
             Fraction(1, 4): "a quarter", Fraction(1, 3): "a third"}
    return names.get(fraction, str(fraction))
