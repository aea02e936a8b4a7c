"""make verify's bad input, before any host is contacted: each a sentence naming what is wrong, exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checks.verify.shell_env import reader_env
from zrunbook import ROOT, SNIPPETS
from zrunbook.verify import profile as prof
from zrunbook.verify import target

PROFILE = SNIPPETS / "verify/site-profile.toml"
BAD = Path(__file__).parent / "bad"
INVENTORY = """all:
  children:
    webservers:
      hosts:
        web1: {ansible_host: 192.0.2.10}
    zguests:
      children:
        webservers: {}
"""


def verify(*args: str):
    env = reader_env()
    return subprocess.run([sys.executable, "-m", "zrunbook", "verify", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120, check=False)


@pytest.mark.negative(invariant="zrunbook verify refuses an inventory that does not parse",
                      expects="exit status 2 (bad input): the inventory does not parse, named")
@pytest.mark.uses("verify/site-profile.toml")
def test_an_inventory_that_does_not_parse_stops_verify_with_its_name(tmp_path):
    bad = tmp_path / "hosts.yml"
    bad.write_text("all:\n  hosts:\n    web1: [unclosed\n", encoding="utf-8")
    done = verify("--inventory", str(bad), "--profile", str(PROFILE))
    assert done.returncode == 2
    assert f"the inventory {bad} does not parse" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1] == "zrunbook verify: exit status 2 (bad input)"


@pytest.mark.uses("verify/site-profile.toml")
def test_a_group_that_matches_nothing_names_the_groups_there_are(tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text(INVENTORY, encoding="utf-8")
    done = verify("--inventory", str(inv), "--profile", str(PROFILE), "--limit", "appservers")
    assert done.returncode == 2
    assert "LIMIT=appservers matches no host of the inventory (its groups: webservers, zguests)" in done.stderr


def test_groups_are_read_through_children(tmp_path):
    inv = tmp_path / "hosts.yml"
    inv.write_text(INVENTORY, encoding="utf-8")
    inventory = target.read_inventory(str(inv))
    assert target.select(inventory, "zguests") == ["web1"]
    assert {"webservers", "zguests", "all"} <= target.groups_of(inventory, "web1")


def test_a_profile_value_of_the_wrong_type_names_its_key_and_line(tmp_path):
    done = verify("--inventory", str(tmp_path / "none.yml"), "--profile", str(BAD / "wrong-type.toml"))
    assert done.returncode == 2
    assert "wrong-type.toml:19: servers.apache.connections: must be integer, not str 'three'" in done.stderr


@pytest.mark.snippet("verify/site-profile.toml", checker="site-profile")
def test_the_example_profile_is_valid_and_renders_the_bundle_env_file():
    env = prof.env_file(prof.load(PROFILE))
    assert "export APACHE_TOKEN_LABEL=IBMICATOK" in env
    assert "export APACHE_SERVICE_USER=www-data" in env
    assert "TOKEN_USER_PIN is not in this file" in env
    assert "13572468" not in env


def test_a_pin_written_into_the_profile_is_refused():
    problems = prof.file_problems(BAD / "pin-in-profile.toml")
    assert problems == [f"{BAD / 'pin-in-profile.toml'}:11: tokens.web.user_pin: not a key of the site profile "
                        "(the keys are in zrunbook/verify/profile.schema.json)"]


def test_the_single_token_form_of_older_profiles_says_how_to_name_tokens_now():
    problems = prof.file_problems(BAD / "old-single-token.toml")
    assert len(problems) == 1, problems
    assert "a table [tokens.NAME] each (label, user_pin_env)" in problems[0]


def test_a_server_s_token_must_name_a_tokens_table():
    assert prof.file_problems(BAD / "token-not-defined.toml") == [
        f"{BAD / 'token-not-defined.toml'}:16: servers.apache.token: 'webb' names no [tokens.webb] table (the profile "
        "has web)"]
