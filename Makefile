# learn: two commands for a new user —  `make demo` (installs, then shows it working)
# and `make test` (installs, then runs every test).
PYTHON ?= python3
VENV   ?= .venv
PREFIX ?= $(HOME)/.local
BIN     = $(VENV)/bin

.PHONY: install demo test test-fast lint man bench bench-smoke clean

# A regular (not editable) install, as a user's: an editable install puts an import hook in
# every start of the venv's interpreter, 8 ms of the ~17 ms every hook call pays to start.
# Reinstalled whenever a source file changes (`make test` does it; the tests check it).
SOURCES := pyproject.toml $(shell find learn_cli -name "*.py" 2>/dev/null) $(wildcard docs/*.md) man/learn.1

$(VENV)/.installed: $(SOURCES)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '.[test]'
	@rm -rf build
	@touch $@

install: $(VENV)/.installed
	@mkdir -p $(PREFIX)/bin $(PREFIX)/share/man/man1
	@ln -sf $(abspath $(BIN)/learn) $(PREFIX)/bin/learn
	@install -m 0644 man/learn.1 $(PREFIX)/share/man/man1/learn.1
	@echo "learn installed: $(PREFIX)/bin/learn -> $(abspath $(BIN)/learn); man page in $(PREFIX)/share/man/man1"

demo: install
	@bash tools/demo.sh $(abspath $(BIN)/learn)

test: install
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

test-fast: install
	$(BIN)/python -m pytest -q -n 2 -m "not slow" -p no:cacheprovider

lint: install
	$(BIN)/python -m ruff check learn_cli tests bench tools

man: install
	$(BIN)/python tools/gen_man.py > man/learn.1

bench: install
	$(BIN)/python bench/run.py --boost

bench-smoke: install
	$(BIN)/python bench/run.py --smoke

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

readme:
	python3 tools/build_readme.py
