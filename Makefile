# Two commands for a new user: `make run` and `make test` (`make test-fast` while developing).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# One BLAS thread per solve: CoLiDE's d x d products and inverses (d <= a few hundred) gain
# nothing from threads, and two BLAS threads per fit oversubscribe the cores as soon as two fits
# (two sessions, or joblib's parallel runs) overlap: measured here, a 150 x 150 inverse went
# from 0.8 ms to 15 ms under load. Parallelism comes from running fits side by side instead.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1

.PHONY: run test test-fast bench clean

# (Re)create the virtual environment when it is missing or requirements.txt / pyproject.toml is
# newer: the pinned requirements first, then the project itself in editable mode (no further
# dependencies: they are the pins), so `import colide_core` and `import dashboard` work from
# anywhere. Recompile the numba kernels when colide_core/solver/_fast_kernels.py (or the loop
# _fast.py, which warmup() runs) is newer (numba's disk cache is keyed on the kernels' file: after a
# change, the first fit of every process would otherwise pay the compile).
$(STAMP): requirements.txt pyproject.toml colide_core/solver/_fast.py colide_core/solver/_fast_kernels.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	@# Compile the fast solver's numba kernels once (cached on disk next to colide_core/solver/_fast_kernels.py)
	@# so that neither the first fit in the app nor the first test pays the ~3 s compile.
	$(BIN)/python -c "from colide_core.solver._fast import warmup; warmup()"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.address localhost

# Everything: unit, page (AppTest), slow and browser (tests/e2e, chromium) tests, and the
# docstring examples of the library and the dashboard. CI runs this.
test: $(STAMP)
	$(BIN)/python -m pytest -q tests colide_core dashboard --doctest-modules

# Everything except the browser tests and the slow fits (markers in pytest.ini and
# tests/e2e/conftest.py), for the edit-test loop.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not browser and not slow" tests colide_core dashboard --doctest-modules

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_solver.py --quick

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
