"""Values the renewal page and the monitoring page state (the ``{value}`` role, e.g. ``{value}`daytwo:renew_at```),
computed from zrunbook/daytwo/renewal.py and the lifetimes table, so the pages cannot disagree with the checks."""

from __future__ import annotations

from zrunbook.daytwo import renewal as r

DEPENDS_ON = ["zrunbook/daytwo/renewal.py", "facts/daytwo/certificate-lifetimes.csv"]


def renew_at() -> str:
    return r.words(r.RENEW_AT)


def expiry_alert_at() -> str:
    return r.words(r.EXPIRY_ALERT_AT)


def retry_share() -> str:
    return r.words(r.RETRY_SHARE)


def failing_for() -> str:
    return {"1h": "an hour"}.get(r.FAILING_FOR, r.FAILING_FOR)


def _shortest() -> int:
    return min(int(row[r.LIFETIME_COLUMN]) for row in r.lifetimes())


def shortest_lifetime() -> str:
    return str(_shortest())


def shortest_renewal_day() -> str:
    return r.days(r.renewal_seconds(_shortest()))


def shortest_alert_day() -> str:
    return r.days(r.alert_seconds(_shortest()))


def shortest_retry_days() -> str:
    return r.days(r.alert_seconds(_shortest()) - r.renewal_seconds(_shortest()))


def shortest_left_at_alert() -> str:
    return r.days(_shortest() * r.DAY - r.alert_seconds(_shortest()))
