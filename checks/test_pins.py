"""One package, one pin: every place pyproject.toml names a package (the wheel's dependencies, the build backend, each
dependency group) gives it the same version range.

A group that needs what another group pins includes that group (``{include-group = ...}``) instead of repeating it;
where a package must be listed twice (the wheel's ``dependencies`` and the verify group, jsonschema in the profile
group too, hatchling as the build backend and in the docs group, javaproperties in the docs group and in the check
group that bench-tls installs alone), this test holds the ranges equal, so a pin raised in one place cannot leave
the other behind.
"""

from __future__ import annotations

import re
import tomllib

from zrunbook import ROOT

NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(.*?)\s*$")


def pins(project: dict) -> dict[str, dict[str, str]]:
    """package name -> {where it is named: its version range}."""
    places = {"project.dependencies": project.get("project", {}).get("dependencies", []),
              "build-system.requires": project.get("build-system", {}).get("requires", [])}
    places |= {f"dependency-groups.{g}": items for g, items in project.get("dependency-groups", {}).items()}
    found: dict[str, dict[str, str]] = {}
    for where, items in places.items():
        for item in items:
            if isinstance(item, str):
                name, spec = NAME.match(item.split(";")[0]).groups()
                found.setdefault(re.sub(r"[-_.]+", "-", name).lower(), {})[where] = spec.replace(" ", "")
    return found


def problems(project: dict) -> list[str]:
    return [f"{name} is pinned differently: " + ", ".join(f"{w} {s or '(no range)'}" for w, s in places.items())
            for name, places in sorted(pins(project).items()) if len(set(places.values())) > 1]


def test_every_package_has_one_pin():
    assert problems(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))) == []


def test_the_pin_check_names_a_package_pinned_two_ways():
    project = {"project": {"dependencies": ["pytest>=9.0,<9.2"]},
               "dependency-groups": {"verify": ["pytest >=9.0, <9.2", "jsonschema>=4.23,<5"],
                                     "check": [{"include-group": "verify"}, "pytest>=9.0,<9.3"]}}
    assert problems(project) == ["pytest is pinned differently: project.dependencies >=9.0,<9.2, "
                                 "dependency-groups.verify >=9.0,<9.2, dependency-groups.check >=9.0,<9.3"]
