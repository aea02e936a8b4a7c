"""``python -m zrunbook COMMAND``: the project's tools in one place.

    bundle [OUT] [--profile SITE.toml]
                        the deployer's archive of every snippet with MANIFEST.json (build/results.json), and
                        site.env rendered from the site profile when one is given
    outcome PATH        each checker's outcome for snippets/PATH, as its badge shows it
    where PATH          a snippet's pages, checks, negative cases, facts tables and prepared states; or what a
                        test (checks/...py[::name]) checks
    bench-snippet       time `make check SNIPPET=...` (static and host) and the set-up probe
    verify ARGS...      the runbook's read-only checks against an Ansible inventory's hosts (--help for the options)
    doctor ARGS...      which known reason makes one host's token stop answering (--help for the options)
    serve [PORT]        live preview on http://127.0.0.1:PORT/ (default 8000), rebuilt on every change

The container hosts and the measurements on them belong to the checks' harness: ``python -m checks.hosts build
[HOST...] | build-walkthrough [HOST...] | tags [HOST...] | sweep | remove-prefix PREFIX`` and
``python -m checks.hosts.bench_tls`` (make bench WHAT=tls).
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0 if argv else 2
    command, args = argv[0], argv[1:]
    if command == "bundle":
        from zrunbook import bundle
        from zrunbook.verify import profile as prof
        site = None
        if "--profile" in args:
            i = args.index("--profile")
            if i + 1 >= len(args):
                print("usage: python -m zrunbook bundle [OUT] [--profile SITE.toml]", file=sys.stderr)
                return 2
            try:
                site = prof.load(args[i + 1])
            except prof.ProfileError as exc:
                print(f"zrunbook bundle: {exc}", file=sys.stderr)
                return 2
            args = args[:i] + args[i + 2:]
        print(bundle.write_bundle(Path(args[0]) if args else bundle.DEFAULT, site=site))
        return 0
    if command == "outcome":
        from zrunbook import ledger
        from zrunbook.snippets import digest
        if len(args) != 1 or digest(args[0]) is None:
            print("usage: python -m zrunbook outcome PATH (a file under snippets/)", file=sys.stderr)
            return 2
        for e in ledger.entries(ledger.read(ledger.RESULTS), args[0], digest(args[0])):
            print(f"{e['checker']} · {e['host']} · {e['outcome']}  ({e['date'] or '-'}, {e['commit'] or '-'})")
        if not ledger.RESULTS.is_file():
            print(f"not run in this build: make check writes {ledger.RESULTS.relative_to(ledger.ROOT)}")
        return 0
    if command == "where":
        from zrunbook import where
        return where.main(args)
    if command == "doctor":
        from zrunbook.verify import doctor
        return doctor.main(args)
    if command == "verify":
        from zrunbook.verify import cli
        return cli.main(args)
    if command == "bench-snippet":
        from zrunbook import bench_snippet
        return bench_snippet.main(["bench-snippet", *args])
    if command == "serve":
        from zrunbook import serve
        return serve.main(args)
    print(f"unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


INSTALLED_COMMANDS = ("verify", "doctor")


def installed() -> int:
    """The console script ``zrunbook`` of the wheel the site offers: verify and doctor only. The other commands
    read the checkout (its declarations, pages and results), which the wheel does not carry."""
    argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("usage: zrunbook verify --inventory INV --profile SITE.toml [--limit GROUP] [--out DIR] [--workers N]\n"
              "       zrunbook doctor --inventory INV --profile SITE.toml --host NAME\n"
              "(zrunbook verify --help and zrunbook doctor --help give every option)")
        return 0 if argv else 2
    if argv[0] not in INSTALLED_COMMANDS:
        print(f"zrunbook: {argv[0]!r} is not a command of the installed tool, which has verify and doctor; the "
              "other commands (bundle, where, outcome, serve) run in a checkout of the runbook", file=sys.stderr)
        return 2
    return main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
