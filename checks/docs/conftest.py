"""Tests of the guide's Sphinx extensions on small projects built in-process.

The ``sphinx_root`` fixture comes from checks/sphinx_roots.py (a plugin checks/conftest.py lists)."""
