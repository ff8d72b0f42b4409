# Two commands are all the set-up there is: `make demo` and `make test`.
PY_BOOTSTRAP ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_WORKERS ?= 2

.PHONY: install demo test lint clean

$(STAMP): pyproject.toml
	@bash scripts/install-system.sh
	@$(PY_BOOTSTRAP) scripts/check-python.py
	@test -x $(BIN)/python || $(PY_BOOTSTRAP) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing issuebench and its dependencies into $(VENV) (a minute or so the first time)"
	$(BIN)/python -m pip install --progress-bar on -e '.[dev,ray]'
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/issuebench demo
	@echo "issuebench is installed in $(BIN): run $(BIN)/issuebench --help, or 'source $(BIN)/activate' first to type just issuebench"

test: install
	@bash scripts/install-system.sh --test-tools
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -q

lint: install
	$(BIN)/ruff check src tests benchmarks scripts

clean:
	rm -rf $(VENV) build src/*.egg-info demo-run
