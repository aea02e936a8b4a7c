"""``@pytest.mark.walk(chapter)``: a walkthrough test of the chapter, after the chapters its index page names
(``{walked}`` with ``:after:``; zrunbook.walkthrough.walk_order). Its snippet marker is added per host
(clean_host's parameter), naming only the steps the walk acts on there (zrunbook.walkthrough.acting): a step a
page declares s390x only is walked, and badged, on the s390x host alone."""

import pytest

from zrunbook import walkthrough

TABS = walkthrough.DEBIAN_TABS


def pytest_configure(config):
    config.addinivalue_line("markers", "walk(chapter): a walkthrough of a how-to chapter after those it names")


def pytest_itemcollected(item):
    mark = item.get_closest_marker("walk")
    callspec = getattr(item, "callspec", None)
    if mark is None or callspec is None or "clean_host" not in callspec.params:
        return
    arch = str(callspec.params["clean_host"]).rsplit("-", 1)[-1]
    acted_on = walkthrough.acting(walkthrough.walk_order(mark.args[0]), TABS, arch)
    if acted_on:  # a chapter with no step a Debian host can run (CICS TG on z/OS) badges nothing
        item.add_marker(pytest.mark.snippet(*acted_on, checker="walkthrough"))
