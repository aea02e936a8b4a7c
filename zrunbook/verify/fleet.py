"""The test ``make verify`` runs once per inventory host and runbook step (zrunbook/verify/plugin.py makes the
parameters). Its verdict: passed, failed (with the step's own sentence and the page that fixes it), or not
applicable (the host is in none of the groups the site profile gives that server): a pytest skip.
"""

from __future__ import annotations

import os
import time

import pytest

from zrunbook.verify import target
from zrunbook.verify.report import page_url
from zrunbook.verify.steps import ROOT, SERVICE, applies, setting, values


def test_step(verify_host, verify_step, verify_setup, verify_connections, request):
    inventory, _, profile = verify_setup
    step = verify_step
    row = {"host": verify_host, "step": step.id, "title": step.title, "page": step.page, "label": step.label,
           "snippet": step.snippet, "url": page_url(profile, step), "verdict": "passed", "message": ""}
    request.node.user_properties.append(("zr_verdict", row))

    def verdict(kind: str, message: str) -> None:
        row["verdict"], row["message"] = kind, message
        if kind == "not applicable":
            pytest.skip(f"not applicable: {message}")
        if kind == "failed":
            pytest.fail(f"{verify_host}: {step.id}: {message} -> {row['url']}", pytrace=False)

    why_not = applies(step, profile, target.groups_of(inventory, verify_host))
    if why_not:
        verdict("not applicable", why_not)
    if verify_host not in verify_connections:  # once per host and worker: reachable, and as whom
        try:
            host = target.connect(request.config.getoption("zr_inventory"), verify_host)
            verify_connections[verify_host] = (host, target.reach(host), None)
        except (target.Unreachable, RuntimeError) as exc:
            verify_connections[verify_host] = (None, None, str(exc))
    host, _login, unreachable = verify_connections[verify_host]
    if unreachable:
        verdict("failed", f"not checked: {unreachable}")
    hostvars = target.hostvars_of(inventory, verify_host)
    service_user = setting(profile, step.part, hostvars).get("user")
    pin = None
    if step.secrets:
        pin = os.environ.get(profile.pin_env)
        if not pin:
            verdict("failed", f"not run: the token's user PIN is not in the environment variable {profile.pin_env} "
                              f"(the site profile's token.user_pin_env): export it before make verify")
    slot = None
    if "SLOT" in step.env:
        slot, why = target.slot_of(host, profile.token_label, step.run_as, service_user)
        if slot is None:
            verdict("failed", why)
    env, args = values(step, profile, slot, pin, hostvars)
    started = time.monotonic()
    result = target.run_step(host, step, env, args, service_user)
    row["seconds"] = round(time.monotonic() - started, 1)
    said = (result.stdout.strip() or result.stderr.strip()).splitlines()
    if result.rc != 0:
        err = [line for line in result.stderr.strip().splitlines() if line.strip()]
        if step.run_as in (ROOT, SERVICE) and any("sudo:" in line and "password" in line for line in err):
            verdict("failed", f"not run: it runs as {step.run_as if step.run_as == ROOT else service_user} and "
                              f"sudo asked for a password; give the login user sudo rights or set ansible_become")
        verdict("failed", (err or said or [f"exit status {result.rc}"])[-1])
    row["message"] = said[-1] if said else ""
