"""What a test declares it reads: its own markers, the harness helpers and fixtures it calls, and its prepared state.

A test checks some snippets (``@pytest.mark.snippet``) and, to get there, runs others: the Apache site step behind
``serve_token``, the token set-up of its prepared state. The observer (checks/observe.py) sees every snippet a test
read; this module says which of them the test declared, so that one it did not declare fails it, naming what to add:

* ``@pytest.mark.snippet(PATTERN, checker=...)``: the snippets the test checks;
* ``@pytest.mark.uses(PATTERN, ...)``: snippets the test runs or reads on its way without judging them (a step that
  makes the state it checks), on a test, a class or a module (``pytestmark``);
* ``@reads(PATTERN, ...)`` (checks/hosts/steps.py) on a harness helper or fixture: every test that calls it,
  directly or through another helper, declares those snippets. Calls are read from the code objects (the names a
  function uses, resolved in its module, and names taken from a module it imported), not run;
* ``@pytest.mark.from_state(STATE)``: every file under the state's snippet folders (its key covers them).
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable

from checks.hosts.steps import READS as ATTRIBUTE
from checks.hosts.steps import reads  # noqa: F401  (the decorator, defined with the harness)
from zrunbook.snippets import expand


def _names(code: types.CodeType) -> set[str]:
    names, todo = set(), [code]
    while todo:
        c = todo.pop()
        names |= set(c.co_names) | set(c.co_freevars)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return names


def _project(obj) -> bool:
    module = getattr(obj, "__module__", None) or getattr(obj, "__name__", "")
    return isinstance(module, str) and module.split(".")[0] == "checks"


def helper_patterns(functions: Iterable[Callable]) -> set[str]:
    """The patterns declared with ``@reads`` by these functions and every project function they call, transitively."""
    found: set[str] = set()
    seen: set[int] = set()
    todo = [getattr(f, "__wrapped__", f) for f in functions]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        found |= set(getattr(fn, ATTRIBUTE, ()))
        code = getattr(fn, "__code__", None)
        if code is None:
            continue
        glb = getattr(fn, "__globals__", {})
        names = _names(code)
        modules = [glb[n] for n in names if isinstance(glb.get(n), types.ModuleType) and _project(glb[n])]
        for name in names:
            candidates = [glb.get(name), *(getattr(m, name, None) for m in modules)]
            todo += [c for c in candidates if isinstance(c, types.FunctionType) and _project(c)]
    return found


def fixture_functions(item) -> list[Callable]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [defs[-1].func for name, defs in info.name2fixturedefs.items() if defs and name in item.fixturenames]


def declared(item, *, states: bool = True) -> set[str]:
    """Every snippet (relative to snippets/) the test declares it reads, by the rules in the module's docstring.
    ``states=False`` leaves out the prepared state's folders: a state's key covers whole folders, so a new file in
    one would otherwise count as read by every test of that state (``SNIPPET=`` selects with states=False)."""
    patterns: set[str] = set()
    for name in ("snippet", "uses"):
        for mark in item.iter_markers(name):
            patterns |= set(mark.args)
    function = getattr(item, "function", None)
    patterns |= helper_patterns([*([function] if function else []), *fixture_functions(item)])
    files = {rel for p in patterns for rel in expand(p)}
    state = item.get_closest_marker("from_state") if states else None
    if state is not None and state.args:
        from checks.hosts import engine as eng

        files |= {p.relative_to(eng.SNIPPETS).as_posix() for p in state.args[0].snippet_files()}
    return files


def fixture_declared(fixturedef, node) -> set[str]:
    """What a fixture wider than one test declares it reads: ``@reads`` on its function and the helpers it calls,
    and the ``snippet``/``uses`` markers of the node it belongs to (a module's ``pytestmark``, a class's marks; none
    for a session fixture). The same for every test that uses it, whichever sets it up."""
    patterns = helper_patterns([fixturedef.func])
    for name in ("snippet", "uses"):
        for mark in getattr(node, "iter_markers", lambda _: ())(name):
            patterns |= set(mark.args)
    return {rel for p in patterns for rel in expand(p)}


_EVERY_USER: dict[tuple[str, str], set[str]] = {}


def declared_by_every_user(session, name: str, node) -> set[str]:
    """What every collected test that uses fixture ``name`` within ``node`` (its module or class; the whole session
    for a session fixture) declares: a read they all declare is declared whichever of them sets the fixture up."""
    scope = getattr(node, "nodeid", "")
    key = (name, scope)
    if key not in _EVERY_USER:
        users = [i for i in getattr(session, "items", ()) if name in getattr(i, "fixturenames", ())
                 and (not scope or i.nodeid.startswith(scope + "::"))]
        _EVERY_USER[key] = set.intersection(*(declared(i) for i in users)) if users else set()
    return _EVERY_USER[key]


def fixture_message(name: str, undeclared: list[str]) -> str:
    lines = "\n".join(f"  snippets/{rel}" for rel in undeclared)
    return (f"fixture {name!r} (wider than one test) read snippets it does not declare (checks/observe.py saw them "
            f"while it was set up):\n{lines}\nDeclare them with @reads(\"{undeclared[0]}\") (checks/uses.py) on the "
            "fixture, with @pytest.mark.uses in the pytestmark of the module that defines it, or on every test that "
            "uses the fixture; a marker on the test that happened to set it up is not enough (another order gives "
            "the read to another test).")


def message(nodeid: str, undeclared: list[str]) -> str:
    lines = "\n".join(f"  snippets/{rel}" for rel in undeclared)
    first = undeclared[0]
    return (f"{nodeid} read snippets it does not declare (checks/observe.py saw them):\n{lines}\n"
            f"Declare each: @pytest.mark.snippet(\"{first}\", checker=...) if the test judges it, "
            f"@pytest.mark.uses(\"{first}\") if it only runs it on the way, or @reads(\"{first}\") "
            "(checks/uses.py) on the harness helper that reads it; then run make declarations.")
