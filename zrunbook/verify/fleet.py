"""The test ``make verify`` runs once per inventory host and runbook step (zrunbook/verify/plugin.py makes the
parameters). Its verdict: passed; failed (with every reason the step gave and the page that fixes it); cannot tell
(the step could not decide, for example openCryptoki's statistics are off); or not applicable (the host is in none
of the groups the site profile gives that server): a pytest skip.

A step that logs in to a token goes through zrunbook/verify/pins.py: no login when the preflight found a doubtful
flag on that token or held the PIN variable, one host at a time per PIN variable, and none after the first refusal.
"""

from __future__ import annotations

import os
import time

import pytest

from zrunbook.verify import pins, target
from zrunbook.verify.report import guide_base, page_url
from zrunbook.verify.steps import ROOT, applies, setting, token_of, values

# A check snippet's exit status beyond 0 (passed) and 1 (failed): see snippets/crypto/verify/check-key-in-token.sh.
PIN_REFUSED, NOT_LOGGED_IN, CANNOT_TELL = 3, 4, 5


def test_step(verify_host, verify_step, verify_setup, verify_connections, request):
    inventory, _, profile = verify_setup
    step = verify_step
    row = {"host": verify_host, "step": step.id, "title": step.title, "page": step.page, "label": step.label,
           "snippet": step.snippet, "url": page_url(profile, step), "verdict": "passed", "message": ""}
    request.node.user_properties.append(("zr_verdict", row))

    def verdict(kind: str, message: str) -> None:
        row["verdict"], row["message"] = kind, message
        # JUnit has pass, failure and skip only: the verdict itself goes into verify.xml as the testcase's property
        # "verdict", so a CI system can tell "cannot tell" from "failed" there too.
        request.node.user_properties.append(("verdict", kind))
        if kind == "not applicable":
            pytest.skip(f"not applicable: {message}")
        if kind in ("failed", "cannot tell"):
            pytest.fail(f"{verify_host}: {step.id}: {kind}: {message} -> {row['url']}", pytrace=False)

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
    guard = pins.Guard(request.config.zr_run_dir)
    token, why = token_of(profile, step.part, hostvars)
    looked = guard.preflight()["hosts"].get(verify_host, {"error": "the preflight did not look at this host"})
    if step.run_as != target.LOGIN and not looked.get("error"):  # the host's copy, run through sudo, is this one
        differs = target.copy_differs(step.snippet, looked.get("installed", {}))
        if differs:
            verdict("failed", f"not run: {differs}")
    if step.part != "crypto" and target.SLOTD_HUNG in (looked.get("error") or ""):
        # Every step of a server makes a handshake that its key in the token signs; a worker without a token session
        # yet (any worker after a restart) waits for the daemon, and each such step would wait out its own limit.
        verdict("failed", f"not run: {looked['error']}; every check of this server needs a handshake its token signs, "
                          "which waits for the daemon")
    slot = pin = None
    if "SLOT" in step.env:
        if token is None:
            verdict("failed", why)
        if looked.get("error"):
            verdict("failed", f"not run: {looked['error']}")
        state = looked["tokens"].get(token.label)
        if state is None:
            verdict("failed", f"no token labelled {token.label!r} in pkcsconf -t (initialise it: the crypto chapter's "
                              "token page)")
        slot = state["slot"]
    recover = f"{guide_base(profile)}/{pins.RECOVER_PAGE}.html#{pins.RECOVER_LABEL}"
    if step.secrets:
        pin = os.environ.get(token.pin_env)
        if not pin:
            verdict("failed", f"not run: the user PIN of token {token.label} is not in the environment variable "
                              f"{token.pin_env} (the site profile's tokens.{token.name}.user_pin_env): export it "
                              "before make verify")
        if pins.doubtful(state["flags"]):
            verdict("failed", f"not logged in: {pins.describe(token.label, verify_host, state['flags'])}. "
                              f"How to recover: {recover}")
        held = guard.preflight()["held"].get(token.pin_env)
        if held:
            verdict("failed", f"not run: {held}; so the PIN in {token.pin_env} is used on no host in this run. "
                              f"How to recover: {recover}")
    env, args = values(step, profile, slot, pin, hostvars)
    started = time.monotonic()
    if step.secrets:
        try:
            with guard.login(token.pin_env) as refuse:
                refused = guard.refused(token.pin_env)
                if refused:
                    verdict("failed", f"not run: the PIN in {token.pin_env} was refused {refused}; no host is "
                                      "logged into with it again in this run")
                result = target.run_step(host, step, env, args, service_user)
                if result.rc == PIN_REFUSED or any(code in result.stderr for code in pins.REFUSED):
                    refuse(f"on {verify_host} at {step.id}")
        except TimeoutError as exc:
            verdict("failed", f"not run: {exc}")
    else:
        result = target.run_step(host, step, env, args, service_user)
    row["seconds"] = round(time.monotonic() - started, 1)
    said = [line for line in (result.stdout.strip() or result.stderr.strip()).splitlines() if line.strip()]
    if result.rc != 0:
        err = [line.strip() for line in result.stderr.strip().splitlines() if line.strip()]
        if step.run_as != target.LOGIN and target.sudo_refused(result):
            verdict("failed", f"not run: it runs as {'root' if step.run_as == ROOT else service_user} and "
                              f"sudo asked for a password; give the login user sudo rights or set ansible_become")
        if result.rc == target.TIMED_OUT:
            err.append(f"no answer within {target.STEP_SECONDS} s: the host ended the step and everything it started")
        reasons = "\n".join((err or said or [f"exit status {result.rc}"])[-20:])
        if token is not None and token.pin_env != "TOKEN_USER_PIN":  # the snippet's name for what the reader set
            reasons = reasons.replace("TOKEN_USER_PIN", f"{token.pin_env} (given to the check as TOKEN_USER_PIN)")
        verdict("cannot tell" if result.rc == CANNOT_TELL else "failed", reasons)
    row["message"] = said[-1] if said else ""
    request.node.user_properties.append(("verdict", "passed"))
