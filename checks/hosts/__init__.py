"""Container hosts for the checks: see engine.py and plugin.py."""
