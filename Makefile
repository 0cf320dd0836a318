# learn: two commands for a new user —  `make demo` (installs, then shows it working)
# and `make test` (installs, then runs every test).
PYTHON ?= python3
VENV   ?= .venv
PREFIX ?= $(HOME)/.local
BIN     = $(VENV)/bin

.PHONY: install announce uninstall demo test test-fast fuzz lint man readme bench bench-smoke clean

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

# What `make install` writes outside this folder (and `make uninstall` removes again).
LINK       = $(PREFIX)/bin/learn
MANPAGE    = $(PREFIX)/share/man/man1/learn.1
COMPLETION = $(PREFIX)/share/bash-completion/completions/learn \
             $(PREFIX)/share/zsh/site-functions/_learn \
             $(PREFIX)/share/fish/vendor_completions.d/learn.fish

install: announce $(VENV)/.installed
	@mkdir -p $(PREFIX)/bin $(PREFIX)/share/man/man1 $(dir $(COMPLETION))
	@ln -sf $(abspath $(BIN)/learn) $(LINK)
	@install -m 0644 man/learn.1 $(MANPAGE)
	@$(BIN)/learn completion bash > $(PREFIX)/share/bash-completion/completions/learn
	@$(BIN)/learn completion zsh > $(PREFIX)/share/zsh/site-functions/_learn
	@$(BIN)/learn completion fish > $(PREFIX)/share/fish/vendor_completions.d/learn.fish
	@echo "learn installed: $(LINK) -> $(abspath $(BIN)/learn)"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on your PATH";; esac

announce:
	@echo "make install writes: a virtualenv in $(abspath $(VENV)) (this folder), the link $(LINK),"
	@echo "  $(MANPAGE) and shell completions under $(PREFIX)/share."
	@echo "  Elsewhere: make install PREFIX=DIR.  Remove: make uninstall PREFIX=$(PREFIX)."

# Removes what `install` wrote under PREFIX, and the user-scope hooks when they run this
# clone's learn (a hook left pointing at a removed learn would fail on every tool call).
# Your learnings stay: see "Remove everything" in docs/install.md.
uninstall:
	@for learn in $(LINK) $(abspath $(BIN)/learn); do \
	    if [ -x "$$learn" ] && "$$learn" hooks status --scope user --json 2>/dev/null \
	        | grep -q '"current": true'; then "$$learn" hooks uninstall --scope user; break; fi; done
	@if [ -L $(LINK) ] && [ "$$(readlink $(LINK))" = "$(abspath $(BIN)/learn)" ]; then rm -f $(LINK); fi
	@rm -f $(MANPAGE) $(COMPLETION)
	@for d in $(PREFIX)/bin $(PREFIX)/share/man/man1 $(PREFIX)/share/man $(dir $(COMPLETION)) \
	    $(PREFIX)/share/bash-completion $(PREFIX)/share/zsh $(PREFIX)/share/fish $(PREFIX)/share $(PREFIX); do \
	    rmdir "$$d" 2>/dev/null || true; done
	@echo "learn uninstalled from $(PREFIX). The virtualenv stays in $(abspath $(VENV)) (make clean removes it);"
	@echo "  your learnings stay in $${SELF_LEARNING_HOME:-$$HOME/.openclaw/self-learning}."

demo: install
	@bash tools/demo.sh $(abspath $(BIN)/learn)

test: install
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

test-fast: install
	$(BIN)/python -m pytest -q -n 2 -m "not slow" -p no:cacheprovider

# The fuzzers with all their inputs (10,000 hook payloads, 10,000 import files) and the volume
# attacks at full size (64 capture processes, 50 kills per operation); `make test` runs the
# same tests smaller (1,000 inputs, 16 processes, 20 kills: tests/conftest.py).
fuzz: $(VENV)/.installed
	LEARN_TESTS_FULL=1 $(BIN)/python -m pytest -q -n 2 -p no:cacheprovider tests/reliability/test_rel_fuzz.py \
	    tests/reliability/test_rel_concurrency.py tests/reliability/test_rel_crash.py

# lint, man, bench and fuzz need the virtualenv, not the link and man page under PREFIX.
lint: $(VENV)/.installed
	$(BIN)/python -m ruff check learn_cli tests bench tools

man: $(VENV)/.installed
	$(BIN)/python tools/gen_man.py > man/learn.1
	$(BIN)/python tools/gen_man.py --help-text > man/help.txt

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py --boost --jobs 2

bench-smoke: $(VENV)/.installed
	$(BIN)/python bench/run.py --smoke

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

readme:
	python3 tools/build_readme.py
