"""The container-host harness the checks share: the engine (engine.py: images, containers, ``python -m checks.hosts``),
the Debian mirror check (mirror.py), the prepared states and steps (steps.py), the helpers host tests share (token.py,
apache.py, liberty.py, ...), and the pytest plugin that makes hosts for tests (plugin.py). Every chapter's checks may
import it; the library (zrunbook/) and the guide never do."""
