"""python -m checks.hosts build|tags|sweep|...: the container engine's own commands (engine.py)."""

import sys

from checks.hosts import engine

sys.exit(engine.main(sys.argv[1:]))
