# Two commands for a new user: `make run` and `make test`.
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

.PHONY: run test bench clean

# (Re)create the virtual environment when it is missing or requirements.txt is newer, and
# recompile the numba kernels when colide_core/_fast.py is newer (numba's disk cache is keyed on
# that file: after a change, the first fit of every process would otherwise pay the compile).
$(STAMP): requirements.txt colide_core/_fast.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@# Compile the fast solver's numba kernels once (cached on disk next to colide_core/_fast.py)
	@# so that neither the first fit in the app nor the first test pays the ~3 s compile.
	$(BIN)/python -c "from colide_core._fast import warmup; warmup()"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run app.py --server.headless true --server.address localhost

test: $(STAMP)
	$(BIN)/python -m pytest -q tests

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_solver.py --quick

clean:
	rm -rf $(VENV) .pytest_cache
