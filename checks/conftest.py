"""Shared pytest configuration: the snippet-coverage plugin and the container-host fixtures."""

pytest_plugins = ["checks.zrunbook_plugin", "checks.hosts.plugin"]
