# Thin wrappers around tox (tox.ini does the work). `make help` lists the targets.
PYTHON ?= python3
VENV   := build/tox-venv
TOX    := $(VENV)/bin/tox

# Narrowing `make check`: CHECKS=checks/crypto (a folder or file), ZR_HOSTS=debian13-amd64,
# SNIPPET=crypto/packages/verify-packages.sh (only the tests that check that snippet).
CHECKS  ?=
SNIPPET ?=
PYTEST_ARGS := $(if $(CHECKS)$(SNIPPET),$(if $(SNIPPET),--zr-only=$(SNIPPET)) $(or $(CHECKS),checks))
# With nothing to narrow, no `--` at all: tox 4 treats a bare `--` as empty posargs and would drop
# tox.ini's default (--zr-require-coverage checks), the 'every snippet is checked' invariant.
CHECK_POSARGS := $(if $(PYTEST_ARGS),-- $(PYTEST_ARGS))

.PHONY: help html pdf check lock check-static declarations lint serve where bundle wheel verify doctor bench $(addprefix bench-,$(BENCHES)) clean
export ZR_HOSTS
# The one-change loop (checks/reuse.py): a plain `make check` reuses the verdicts of tests whose inputs did not
# change since they last passed here; `make check ALL=1` (and CI, which sets it) reruns everything.
export ZR_REUSE := $(if $(ALL)$(CI),,1)
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "%-13s %s\n", $$1, $$2}'

# $(call setup,PURPOSE), a target's first line: the system packages PURPOSE needs (html, pdf or check; the
# lists are in .ci/prereqs.sh: silent when nothing is missing, installed when root, else one sentence
# naming the sudo command), then tox in its own venv (under a lock: two makes may start at once).
setup = @bash .ci/prereqs.sh --make $(1) $@ && mkdir -p build && flock build/.tox-venv.lock sh -c \
	'test -x $(TOX) || { $(PYTHON) -m venv $(VENV) && $(VENV)/bin/pip install --quiet "tox>=4.22,<5"; }'

html: ## build the HTML guide into build/html (warnings are errors)
	$(call setup,html)
	$(TOX) -q -e docs

pdf: ## build the PDF guide into build/latex/zrunbook.pdf
	$(call setup,pdf)
	$(TOX) -q -e pdf

lint: ## ruff on the project's Python
	$(call setup,html)
	$(TOX) -q -e lint

check: ## run every check: the lock probe, ruff, shellcheck, invariants, container hosts (narrow with CHECKS, ZR_HOSTS, SNIPPET)
	$(call setup,check)
	$(PYTHON) -m checks.hosts.lock probe
	$(TOX) -q -e check $(CHECK_POSARGS)

lock: ## re-record the hosts' package locks (checks/hosts/locks/) from what the Debian mirror serves; prints the diff to review
	$(call setup,hosts)
	$(PYTHON) -m checks.hosts.lock record

where: ## everything about one snippet (SNIPPET=crypto/token/init-token.sh) or what one test checks (TEST=checks/...py[::name])
	@test -n "$(SNIPPET)$(TEST)" || { echo "make where: give SNIPPET=<path under snippets/> or TEST=<checks/...py[::test]>" >&2; exit 2; }
	$(call setup,html)
	$(TOX) -q -e docs --notest
	.tox/docs/bin/python -m zrunbook where "$(or $(SNIPPET),$(TEST))"

bundle: ## archive every snippet with a manifest (sha256, checkers, last result) -> build/zrunbook-snippets.tar.gz; PROFILE=site.toml adds site.env
	$(call setup,html)
	$(TOX) -q -e bundle $(if $(PROFILE),-- --profile "$(PROFILE)")

wheel: ## the verify tool as a wheel with its SHA-256 -> build/wheel/zrunbook-*.whl(.sha256); make html puts the same in the site's downloads
	$(call setup,html)
	$(TOX) -q -e docs --notest
	.tox/docs/bin/python -m zrunbook.wheel build/wheel

verify: ## check your hosts against the runbook over SSH: INVENTORY=hosts.yml PROFILE=site.toml [LIMIT=group] [WORKERS=n] -> build/verify/
	@test -n "$(INVENTORY)" -a -n "$(PROFILE)" || { echo "make verify: give INVENTORY=<your Ansible inventory> and PROFILE=<your site profile> (example: snippets/verify/site-profile.toml)" >&2; exit 2; }
	$(call setup,verify)
	$(TOX) -q -e verify -- --inventory "$(INVENTORY)" --profile "$(PROFILE)" $(if $(LIMIT),--limit "$(LIMIT)") $(if $(WORKERS),--workers $(WORKERS))

doctor: ## name the known reasons a host's token stops answering: HOST=name INVENTORY=hosts.yml PROFILE=site.toml
	@test -n "$(HOST)" -a -n "$(INVENTORY)" -a -n "$(PROFILE)" || { echo "make doctor: give HOST=<inventory host>, INVENTORY=<your Ansible inventory> and PROFILE=<your site profile>" >&2; exit 2; }
	$(call setup,verify)
	$(TOX) -q -e doctor -- --inventory "$(INVENTORY)" --profile "$(PROFILE)" --host "$(HOST)"

BENCHES := tls verify liberty token token-settings token-perf pq soak walk build hosts snippet loop
bench: ## measure on this machine: WHAT=tls|verify|liberty|token|token-settings|token-perf|pq|soak|walk|build|hosts|snippet|loop (docs/reference/maintainers.md: "Measuring"); hosts takes BENCH=cold|whole
	@case " $(BENCHES) " in *" $(WHAT) "*) ;; *) echo "make bench: give WHAT=, one of: $(BENCHES)" >&2; exit 2 ;; esac
	$(call setup,$(if $(filter build,$(WHAT)),pdf,check))
	$(TOX) -q -e check --notest
	@$(MAKE) --no-print-directory bench-$(WHAT)

# The measurements behind make bench WHAT=... (no `##`: not listed by make help, not named in the README).
bench-verify:
	$(TOX) -q -e check -- -n 0 -s checks/verify/bench_verify.py
bench-tls:
	$(TOX) -q -e bench-tls
bench-liberty:
	$(TOX) -q -e check -- -n 0 -s checks/was/bench_liberty.py
bench-token:
	$(TOX) -q -e check -- -n 0 -s checks/ihs/bench_apache_token.py
bench-token-settings:
	ZR_HOSTS=debian13-amd64 $(TOX) -q -e check -- -n 0 -s checks/ihs/bench_apache_token_settings.py
bench-token-perf:
	ZR_HOSTS=debian13-amd64 $(TOX) -q -e check -- -n 0 -s checks/ihs/bench_apache_token_perf.py
bench-pq:
	$(TOX) -q -e check -- -n 0 -s checks/ihs/bench_apache_pq.py
bench-soak:
	ZR_HOSTS=debian13-amd64 $(TOX) -q -e check -- -n 0 -s checks/ihs/bench_apache_soak.py
bench-walk:
	.tox/check/bin/python -m zrunbook.bench_walk
bench-build: html
	bash zrunbook/bench_build.sh
bench-hosts:
	PYTHON=$(CURDIR)/.tox/check/bin/python bash checks/hosts/bench.sh $(BENCH)
bench-snippet:
	$(PYTHON) -m zrunbook bench-snippet
bench-loop:
	$(PYTHON) zrunbook/bench_loop.py $(RUNS)

check-static: ## only the static checks (no container, no guide build, no browser): ruff, shellcheck, validators, coverage
	$(call setup,html)
	$(TOX) -q -e check -- --zr-static --zr-require-coverage checks

declarations: ## rewrite zrunbook/declarations.tsv (which test checks which snippet, on which host) from a collection; commit it
	$(call setup,check)
	$(TOX) -q -e declarations






serve: ## live preview on http://127.0.0.1:8000/ (this machine only), rebuilt and reloaded on every change
	$(call setup,html)
	$(TOX) -q -e serve

clean: ## remove build output (keeps nothing)
	rm -rf build .tox
