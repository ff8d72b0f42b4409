# Two commands are all the set-up there is: `make demo` and `make test`.
PY_BOOTSTRAP ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint system clean

$(STAMP): pyproject.toml
	@bash scripts/install-system.sh
	@test -x $(BIN)/python || $(PY_BOOTSTRAP) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/issuebench demo

test: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q

lint: install
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
