"""Tables of make verify's page, generated from the code verify runs: nothing typed twice.

* ``{verify-steps}``: one row per step of zrunbook/verify/steps.py (the step, linked to its place in the guide,
  the snippet, the user it runs as, the profile table whose groups it applies to).
* ``{profile-keys}``: one row per key of zrunbook/verify/profile.schema.json (key, type, required, meaning).
* ``{pin-flags}``: one row per token flag verify will not log in past (zrunbook/verify/pins.py FLAGS): what it
  means, for the services, and how to recover.
"""

from __future__ import annotations

import json

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from facts import FactsTable
from zrunbook.verify import steps as verify_steps
from zrunbook.verify.profile import SCHEMA_FILE


class _Table(FactsTable):
    required_arguments = 0
    option_spec = {}
    fields: list[str] = []

    def table(self, rows: list[list], source: str) -> list[nodes.Node]:
        table = nodes.table(classes=["zr-facts"])
        group = nodes.tgroup(cols=len(self.fields))
        table += group
        for _ in self.fields:
            group += nodes.colspec(colwidth=10)
        head = nodes.thead()
        group += head
        head += self._row(self.fields)
        body = nodes.tbody()
        group += body
        for cells in rows:
            row = nodes.row()
            for cell in cells:
                entry = nodes.entry()
                entry += cell if isinstance(cell, nodes.paragraph) else self._row([str(cell)])[0][0]
                row += entry
            body += row
        note = nodes.paragraph("", "", classes=["zr-facts-source"])
        note += nodes.Text("Generated from ")
        note += nodes.literal(source, source)
        note += nodes.Text(", the code make verify runs.")
        return [table, note]


def _link(label: str, inner: nodes.Node) -> nodes.paragraph:
    """A paragraph holding a reference to a label of the guide (resolved in HTML and in the PDF)."""
    para = nodes.paragraph()
    ref = addnodes.pending_xref("", refdomain="std", reftype="ref", reftarget=label, refexplicit=True, refwarn=True)
    ref += inner
    para += ref
    return para


class VerifySteps(_Table):
    fields = ["step (its place in the guide)", "snippet", "runs as", "applies to hosts in"]

    def run(self):
        self.env.note_dependency(verify_steps.__file__)
        rows = []
        for step in verify_steps.STEPS:
            para = _link(step.label, nodes.inline(step.title, step.title))
            part = "[crypto] groups" if step.part == "crypto" else f"[servers.{step.part}] groups"
            rows.append([para, step.snippet, step.run_as, part])
        return self.table(rows, "zrunbook/verify/steps.py")


def _keys(schema: dict, node: dict, prefix: str, required: set[str]) -> list[list[str]]:
    rows = []
    pattern = next(iter(node.get("patternProperties", {}).values()), None)  # [tokens.NAME]
    named = {"<name>": pattern} if pattern else {}
    for name, spec in {**node.get("properties", {}), **named}.items():
        if "$ref" in spec:
            ref = schema["$defs"][spec["$ref"].rsplit("/", 1)[1]]
            spec = {**ref, **{k: v for k, v in spec.items() if k != "$ref"}}
        key = f"{prefix}{name}"
        if spec.get("type") == "object" and (spec.get("properties") or spec.get("patternProperties")):
            if name in ("apache",):  # the five server tables share one definition: list it once
                key = f"{prefix}<server>"
            elif prefix == "servers.":
                continue
            rows += _keys(schema, spec, f"{key}.", set(spec.get("required", [])))
            continue
        kind = spec.get("type", "")
        if kind == "array":
            kind = f"array of {spec['items'].get('type', '')}"
        rows.append([key, kind, "yes" if name in required else "no", spec.get("description", "")])
    return rows


class ProfileKeys(_Table):
    fields = ["key", "type", "required", "what it is"]

    def run(self):
        self.env.note_dependency(str(SCHEMA_FILE))
        schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
        return self.table(_keys(schema, schema, "", set(schema.get("required", []))),
                          "zrunbook/verify/profile.schema.json")


class PinFlags(_Table):
    fields = ["flag (bit)", "what it says", "Apache httpd (pkcs11-provider 1.0)", "Liberty (SunPKCS11)",
              "how to recover"]

    def run(self):
        from zrunbook.verify import pins

        self.env.note_dependency(pins.__file__)
        rows = [[f"{f.name} ({f.bit:#x})", f.means, f.apache, f.java, f.fix] for f in pins.FLAGS]
        return self.table(rows, "zrunbook/verify/pins.py")


class DoctorSignatures(_Table):
    fields = ["signature (its fix in the guide)", "the cause", "what the service user sees"]

    def run(self):
        from zrunbook.verify import doctor

        self.env.note_dependency(doctor.__file__)
        rows = []
        for sig in doctor.SIGNATURES:
            para = _link(sig.label, nodes.literal(sig.id, sig.id))
            rows.append([para, sig.cause, sig.user_sees])
        return self.table(rows, "zrunbook/verify/doctor.py")


def setup(app: Sphinx):
    app.add_directive("doctor-signatures", DoctorSignatures)
    app.add_directive("verify-steps", VerifySteps)
    app.add_directive("profile-keys", ProfileKeys)
    app.add_directive("pin-flags", PinFlags)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
