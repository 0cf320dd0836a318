# learn: two commands for a new user —  `make demo` (installs, then shows it working)
# and `make test` (installs, then runs every test).
PYTHON ?= python3
VENV   ?= .venv
PREFIX ?= $(HOME)/.local
BIN     = $(VENV)/bin

.PHONY: install demo test test-fast lint man bench bench-smoke clean

$(BIN)/learn: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(BIN)/learn

install: $(BIN)/learn
	@$(BIN)/python -m compileall -q learn_cli  # hooks start fast even where PYTHONDONTWRITEBYTECODE is set
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
