"""Numbers the results pages state, read from the files under snippets/results/ (never typed twice).

``{value}`results:measured_rsa2048_ratio``` and friends: the harness's summary on the debian13-amd64 host
(``snippets/results/measured/debian13-amd64/``) and the studies' transcribed results
(``snippets/results/studies/``).
"""

from __future__ import annotations

import statistics

from zrunbook import SNIPPETS
from zrunbook.facts import rows as csv_rows
from zrunbook.results import pq_cost, soak, token_cost, token_perf, token_settings

MEASURED = SNIPPETS / "results" / "measured" / "debian13-amd64"
STUDIES = SNIPPETS / "results" / "studies"
DEPENDS_ON = [f"snippets/results/measured/debian13-amd64/{f}" for f in ("summary.csv", "machine.csv", "runs.csv")] + [
    f"snippets/results/studies/{f}" for f in ("was-2013-daytrader.csv", "webseal-2007.csv", "jsse-cex2a.csv")] + [
    "snippets/results/measured/token-cost.csv", "snippets/results/measured/soak.csv",
    "snippets/results/measured/pq-handshake-cost.csv", "snippets/results/measured/token-settings.csv",
    "snippets/results/measured/token-perf.csv"]


def _summary(setup: str, test: str, key: str = "rsa2048", payload: str = "") -> dict:
    for r in csv_rows(MEASURED / "summary.csv"):
        if (r["setup"], r["test"], r["key"], r["payload"]) == (setup, test, key, payload):
            return r
    raise KeyError(f"summary.csv has no row {setup} {test} {key} {payload}")


def _machine(item: str) -> str:
    return next(r["value"] for r in csv_rows(MEASURED / "machine.csv") if r["item"] == item)


def _study(file: str, row_id: str) -> dict:
    return next(r for r in csv_rows(STUDIES / file) if r["id"] == row_id)


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _x(x: float) -> str:
    return f"{x:.1f}×"


# --- the machine ---
def machine_cpu() -> str:
    return _machine("cpu model")


def machine_crypto_features() -> str:
    try:
        return _machine("crypto features") or "none reported"
    except StopIteration:
        return "not recorded"


def machine_cores() -> str:
    return _machine("cores")


def machine_openssl() -> str:
    return _machine("openssl").split(" (")[0]


def machine_apache() -> str:
    return _machine("apache")


def machine_runs() -> str:
    return _machine("runs")


def machine_seconds() -> str:
    return _machine("seconds per test")


def machine_load_before() -> str:
    return _machine("load average before")


def machine_load_after() -> str:
    return _machine("load average after")


# --- handshakes ---
def measured_rsa2048_median() -> str:
    return f"{float(_summary('accelerated', 'full-handshake')['median']):.0f}"


def measured_rsa2048_spread() -> str:
    r = _summary("accelerated", "full-handshake")
    return f"{float(r['min']):.0f} to {float(r['max']):.0f} ({float(r['spread_percent']):.0f} %)"


def measured_rsa2048_bound() -> str:
    return f"{float(_summary('accelerated', 'full-handshake')['bound_median']):.0f}"


def measured_rsa2048_ratio() -> str:
    return _pct(float(_summary("accelerated", "full-handshake")["ratio_to_bound"]))


def measured_rsa2048_target_met() -> str:
    met = float(_summary("accelerated", "full-handshake")["ratio_to_bound"]) >= 0.8
    return "meets" if met else "does not meet"


def measured_s_server_ratio() -> str:
    return _pct(float(_summary("accelerated", "full-handshake-openssl-s_server")["ratio_to_bound"]))


def measured_apache_vs_s_server() -> str:
    a = float(_summary("accelerated", "full-handshake")["median"])
    s = float(_summary("accelerated", "full-handshake-openssl-s_server")["median"])
    return _pct(a / s)


def _us_per_handshake(test: str, setup: str = "accelerated") -> float:
    return 1e6 / float(_summary(setup, test)["median"])


def measured_us_apache() -> str:
    return f"{_us_per_handshake('full-handshake'):.0f} µs"


def measured_us_sign() -> str:
    return f"{1e6 / float(_summary('accelerated', 'full-handshake')['bound_median']):.0f} µs"


def measured_us_rsa_kex() -> str:
    return f"{_us_per_handshake('full-handshake-openssl-s_server-rsa-kex'):.0f} µs"


def measured_us_connection() -> str:
    """The cheapest handshake OpenSSL does with the key, less one RSA private-key operation."""
    sign = 1e6 / float(_summary("accelerated", "full-handshake")["bound_median"])
    return f"{_us_per_handshake('full-handshake-openssl-s_server-rsa-kex') - sign:.0f} µs"


def measured_us_ecdhe_tls13() -> str:
    extra = _us_per_handshake("full-handshake-openssl-s_server") - _us_per_handshake(
        "full-handshake-openssl-s_server-rsa-kex")
    return f"{extra:.0f} µs"


def measured_us_apache_extra() -> str:
    extra = _us_per_handshake("full-handshake") - _us_per_handshake("full-handshake-openssl-s_server")
    if extra < 0:
        return f"nothing measurable (Apache was {-extra:.0f} µs per handshake cheaper than s_server, within the spread)"
    return f"{extra:.0f} µs"


def measured_rsa_kex_ratio() -> str:
    return _pct(float(_summary("accelerated", "full-handshake-openssl-s_server-rsa-kex")["ratio_to_bound"]))


def measured_rsa4096_ratio() -> str:
    return _pct(float(_summary("accelerated", "full-handshake", "rsa4096")["ratio_to_bound"]))


def measured_rsa2048_software_ratio() -> str:
    return _pct(float(_summary("software", "full-handshake")["ratio_to_bound"]))


def measured_rsa4096_vs_2048() -> str:
    a = float(_summary("accelerated", "full-handshake")["median"])
    b = float(_summary("accelerated", "full-handshake", "rsa4096")["median"])
    return _x(a / b)


def measured_ecdsa_vs_rsa2048() -> str:
    a = float(_summary("accelerated", "full-handshake", "ecdsa-p256")["median"])
    b = float(_summary("accelerated", "full-handshake")["median"])
    return _x(a / b)


def measured_handshake_accel_gain_2048() -> str:
    a = float(_summary("accelerated", "full-handshake")["median"])
    s = float(_summary("software", "full-handshake")["median"])
    return _x(a / s)


def measured_handshake_accel_gain_4096() -> str:
    a = float(_summary("accelerated", "full-handshake", "rsa4096")["median"])
    s = float(_summary("software", "full-handshake", "rsa4096")["median"])
    return _x(a / s)


def measured_resumed_vs_full() -> str:
    f = float(_summary("accelerated", "full-handshake-get-4k")["median"])
    r = float(_summary("accelerated", "resumed-handshake-get-4k")["median"])
    return _x(r / f)


def measured_resumed_cpu_saved() -> str:
    f = float(_summary("accelerated", "full-handshake-get-4k")["median"])
    r = float(_summary("accelerated", "resumed-handshake-get-4k")["median"])
    return _pct(1 - f / r)


# --- bulk ---
def _bulk_gain(payload: str) -> float:
    return float(_summary("accelerated", "bulk", payload=payload)["median"]) / float(
        _summary("software", "bulk", payload=payload)["median"])


def measured_bulk_gain_4k() -> str:
    return _x(_bulk_gain("4k"))


def measured_bulk_gain_32k() -> str:
    return _x(_bulk_gain("32k"))


def measured_bulk_gain_2_9m() -> str:
    return _x(_bulk_gain("2.9m"))


def measured_aes_bound_gain() -> str:
    a = float(_summary("accelerated", "bulk", payload="2.9m")["bound_median"])
    s = float(_summary("software", "bulk", payload="2.9m")["bound_median"])
    return _x(a / s)


def measured_software_bulk_ratio_2_9m() -> str:
    return _pct(float(_summary("software", "bulk", payload="2.9m")["ratio_to_bound"]))


def measured_cipher() -> str:
    return _summary("accelerated", "bulk", payload="2.9m")["cipher"]


# --- the reverse-proxy junctions (the WebSEAL study's TCP and SSL junctions) ---
def _junction_ratios(setup: str = "accelerated") -> list[float]:
    """Per run: requests per front-end CPU-second through the TLS back-end junction over the plain one."""
    per_run: dict[str, dict[str, float]] = {}
    for r in csv_rows(MEASURED / "runs.csv"):
        if r["setup"] == setup and r["test"] in ("junction-tcp", "junction-ssl"):
            per_run.setdefault(r["run"], {})[r["test"]] = float(r["per_cpu_second"])
    ratios = sorted(v["junction-ssl"] / v["junction-tcp"] for v in per_run.values() if len(v) == 2)
    if not ratios:
        raise KeyError(f"runs.csv has no junction rows for {setup}")
    return ratios


def measured_ssl_junction_ratio() -> str:
    ratios = _junction_ratios()
    med = statistics.median(ratios)
    return (f"{_pct(med)} (runs {_pct(ratios[0])} to {_pct(ratios[-1])}, "
            f"spread {100 * (ratios[-1] - ratios[0]) / med:.0f} %)")


def measured_ssl_junction_loss() -> str:
    return _pct(1 - statistics.median(_junction_ratios()))


def measured_junction_tcp() -> str:
    return f"{float(_summary('accelerated', 'junction-tcp', payload='5.8k')['median']):.0f}"


def measured_junction_ssl() -> str:
    return f"{float(_summary('accelerated', 'junction-ssl', payload='5.8k')['median']):.0f}"


def study_ssl_junction_vs_tcp() -> str:
    r = _study("webseal-2007.csv", "ssl-junction-vs-tcp-junction")
    return _pct(float(r["value"]))


# --- the studies' ratios shown beside them ---
def study_webseal_gain_5_8k() -> str:
    return _x(float(_study("webseal-2007.csv", "ssl-hw-vs-sw-5.8k")["value"]))


def study_webseal_gain_2_9m() -> str:
    return _x(float(_study("webseal-2007.csv", "ssl-hw-vs-sw-2.9m")["value"]))


def study_jsse_session_cache_speed() -> str:
    return _x(float(_study("jsse-cex2a.csv", "session-cache-speed")["value"]))


def study_jsse_session_cache_cpu() -> str:
    return _pct(1 - float(_study("jsse-cex2a.csv", "session-cache-cpu")["value"]))


def study_was_s1_2048_cex3() -> str:
    return _x(float(_study("was-2013-daytrader.csv", "s1-2048-tput-cex3")["value"]))


def study_was_s1_4096_2cex3() -> str:
    return _x(float(_study("was-2013-daytrader.csv", "s1-4096-tput-2cex3")["value"]))


def study_was_s1_4096_cpacf() -> str:
    return _x(float(_study("was-2013-daytrader.csv", "s1-4096-tput-cpacf")["value"]))


# --- what the token costs Apache httpd (make bench WHAT=token) ---
def token_cost_ratios() -> str:
    return token_cost.ratio_sentence()


def token_cost_goal() -> str:
    return token_cost.goal_sentence()


def token_settings_ratios() -> str:
    return token_settings.sentence()


def token_settings_prefork() -> str:
    return token_settings.prefork_sentence()


def token_settings_scratch() -> str:
    return token_settings.scratch_sentence()


def token_settings_page() -> str:
    return token_settings.page_sentence()


def token_settings_scratch_verdict() -> str:
    return token_settings.scratch_verdict()


def token_perf_summary() -> str:
    return token_perf.sentence()


def token_perf_pkcs11() -> str:
    return token_perf.pkcs11_sentence()


def soak_summary() -> str:
    return soak.summary_sentence()


def pq_handshake_ratios() -> str:
    return pq_cost.ratio_sentence()
