"""Tests of the guide's Sphinx extensions on small projects built in-process (checks/docs/testroot.py)."""

from checks.docs.testroot import sphinx_root  # noqa: F401  (a fixture)
