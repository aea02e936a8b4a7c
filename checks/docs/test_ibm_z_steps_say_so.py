"""A step that only IBM Z can carry out says so in its caption (``:needs: ibm-z`` or ``s390x``): scripts that run
libica's or s390-tools' programs or define vfio-ap devices, and slot stanzas of the EP11 and CCA tokens, whose
libraries load only with an adapter in that mode. Without the marker a reader on another machine is told to
install packages that have no build there."""

import re

import pytest

from zrunbook import ROOT, SNIPPETS

DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{snippet\}[ \t]+(\S+)[ \t]*\n((?::[\w-]+:.*\n)*)", re.M)
IBM_Z_ONLY = re.compile(r"^(?!\s*#).*\b(icainfo|icastats|lszcrypt|chzcrypt|chzdev|mdevctl|libpkcs11_ep11\.so|"
                        r"libpkcs11_cca\.so)\b", re.M)


# scripts that use such a program only where the hardware is there, and say why
CONDITIONAL = {"crypto/verify/check-token-signs.sh": "icastats only when the slot's token is the ICA token",
               "monitor/zrunbook-textfile.sh": "icastats only where libica's tools are installed (command -v)"}
GATE = re.compile(r"uname -m\)? *[!=]= *s390x")  # the script itself stops with "this is not IBM Z" elsewhere


def unmarked() -> list[str]:
    found = []
    for page in sorted((ROOT / "docs/how-to").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in DIRECTIVE.finditer(text):
            rel, options = m.group(2), m.group(3)
            if not (rel.endswith(".sh") or rel.endswith(".conf")):
                continue
            body = (SNIPPETS / rel).read_text(encoding="utf-8")
            if rel in CONDITIONAL or GATE.search(body):
                continue
            if rel.endswith(".sh"):  # a script that needs the program, not one that only mentions or looks for it
                uses = [u for u in IBM_Z_ONLY.findall(body)
                        if re.search(rf"^\s*(\S+=\$\()?{re.escape(u)}\s", body, re.M)]
            else:
                uses = IBM_Z_ONLY.findall(body)
            needs = re.search(r"^:needs:\s*(\S+)", options, re.M)
            if uses and not (needs and needs.group(1) in ("ibm-z", "s390x")):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{page.relative_to(ROOT)}:{line}: {rel} uses {sorted(set(uses))}")
    return found


# reads every snippet by design (the observer saw each)
@pytest.mark.uses("**/*")
def test_every_ibm_z_only_step_is_captioned_so():
    assert unmarked() == []
