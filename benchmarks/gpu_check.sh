#!/usr/bin/env bash
# Issues 33 and 50 on a GPU machine: the whole fit on the device at d = 1000, 2000 and 4000 with the
# host's share of each fit, the step's two inverses side by side (the block recursion and one
# jnp.linalg.inv: fits at d = 1000 with each, and the linalg table, decide colide_core.solver._jax.
# _INVERSE["gpu"]), and the backend's tests on the GPU. Tables written under $OUT. Installs nothing,
# needs no network.
#
# Expects a Python with the project's dependencies and JAX with CUDA importable (PYTHON=..., default:
# .venv/bin/python if it exists, else python3); the checkout is put on PYTHONPATH, so the project need
# not be installed. The env part lists what the image lacks. Wheels to carry onto a bare device image
# (pip download --only-binary=:all: --python-version <the image's> --platform manylinux2014_x86_64 ...,
# then pip install --no-index --find-links <dir> ...): the image of 2026-11-28 (Python 3.12, jax 0.11.2
# with CUDA 13, numba, scipy, pandas) lacked gadjid (needed by colide_core.evaluate: carry
# gadjid==0.1.0) and dask/distributed (one test of tests/test_jax_backend.py: carry
# dask[dataframe]==2026.8.0 distributed==2026.8.0 with their pure-Python dependencies: cloudpickle,
# fsspec, partd, locket, toolz, pyyaml, msgpack, sortedcontainers, tblib, zict, psutil, tornado). JAX
# itself must be the image's CUDA build (jax[cuda12] or [cuda13]), never the CPU jaxlib of
# requirements.txt. The host part and the bench tables need only numpy, scipy, threadpoolctl, numba,
# pandas, networkx, scikit-learn and jax.
#
#   OUT=/tmp/out bash benchmarks/gpu_check.sh          # host + tests: capped at 9 minutes (390 + 150 s)
#   OUT=/tmp/out bash benchmarks/gpu_check.sh host     # the linalg table, then the fits (<= 6.5 min)
#   OUT=/tmp/out bash benchmarks/gpu_check.sh tests    # tests/test_jax_loop.py and the polishing's steps on the GPU (<= 2.5 min)
#   OUT=/tmp/out bash benchmarks/gpu_check.sh alltests # tests/test_jax_backend.py too (<= 7 min)
#   OUT=/tmp/out bash benchmarks/gpu_check.sh bench    # issue 33's side-by-side step table (bench_gpu.py)
#   bash benchmarks/gpu_check.sh dry                   # on a CPU: the host part at d = 40, 80 on jax-cpu (~1 min)
#
# One 15-minute lease: the machine's start takes a few minutes, "all" is capped at 9 minutes by its
# parts' timeouts (host 390 s + tests 150 s), which leaves about 3 minutes for a rerun of one part
# with fewer sizes (e.g. GPU_SIZES=4000 GPU_MAX_TIME=30 GPU_LINALG=4000 ... host) or of the tests
# (tests/test_jax_loop.py takes about 2 minutes on the 2-core CPU, compiles included). Timed on
# one H200 on 2026-11-29 (benchmarks/results/gpu_h200_whole_loop.md): the machine started in about
# 30 s, the host part with these defaults took 272 s (linalg ~20 s; d = 200 with the CPU and chunk
# comparisons; d = 1000 14.8 s a fit with each inverse; d = 2000 63 s; d = 4000 cut at 30 s), the
# tests 58 s. To fit d = 4000 to the end (220 s there) in the lease's rest, a second call:
# GPU_SIZES=4000 GPU_MAX_TIME=330 GPU_INVERSE=block GPU_LINALG=500 GPU_HOST_TIMEOUT=395 ... host.
# If a cap cuts the host part, the rows done are in $OUT/gpu_host.md.
# Knobs: GPU_SIZES (default 200,1000,2000,4000), GPU_MAX_TIME (s per fit: one number or one per size,
# default 30,35,90,30), GPU_INVERSE (the step's inverses, default block,direct), GPU_INVERSE_MAX_D (sizes
# above it get the first inverse only, default 1000), GPU_SCHEDULE (paper|short, default paper),
# GPU_HOST_TIMEOUT (s, default 390), GPU_TESTS_TIMEOUT (s, default 150), GPU_LINALG (sizes of the
# inverse table, default 1000,2000,4000), GPU_BENCH_TIMEOUT (s, default 540; the "bench" part only).
#
# Writes $OUT/gpu_env.txt (GPU, JAX, devices, what is missing), $OUT/gpu_host.md (the linalg table;
# each fit: its inverse, seconds, seconds in the compiled loops, host share %, polishing (on the device), steps, and
# max|W - W_first| between the two inverses' fits of a size; the same graphs as the CPU at d = 200
# are checked in the table's d = 200 row when GPU_SIZES includes 200; written after every fit),
# $OUT/gpu_tests.txt (pytest's report). Exit status: the first failing part's.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-benchmarks/results}
mkdir -p "$OUT"
if [ -z "${PYTHON:-}" ]; then
    if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false   # peak memory is the fit's own, not JAX's pool
part=${1:-all}
status=0
device=gpu
sizes=${GPU_SIZES:-200,1000,2000,4000}
max_time=${GPU_MAX_TIME:-30,35,90,30}
inverse=${GPU_INVERSE:-block,direct}
inverse_max_d=${GPU_INVERSE_MAX_D:-1000}
linalg=${GPU_LINALG:-1000,2000,4000}
host_timeout=${GPU_HOST_TIMEOUT:-390}
if [ "$part" = dry ]; then   # the script's own check on a machine without a GPU: small, on jax-cpu
    # (d = 80 > the block inverse's 64-wide leaf, so its two inverses differ there)
    device=jax-cpu sizes=${GPU_SIZES:-40,80} max_time=${GPU_MAX_TIME:-30} linalg=${GPU_LINALG:-100}
    host_timeout=${GPU_HOST_TIMEOUT:-300}
fi

{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || echo "nvidia-smi: not found"
    "$PYTHON" -c 'import sys, numpy, jax; print(sys.version.split()[0], "numpy", numpy.__version__, "jax", jax.__version__, jax.devices())' 2>&1
    "$PYTHON" - <<'EOF' 2>&1
import importlib.util
need = {"numpy": "numpy", "scipy": "scipy", "pandas": "pandas", "networkx": "networkx", "sklearn": "scikit-learn",
        "threadpoolctl": "threadpoolctl", "numba": "numba", "jax": "jax (the image's CUDA build)",
        "gadjid": "gadjid==0.1.0", "dask": "dask[dataframe]==2026.8.0", "distributed": "distributed==2026.8.0",
        "pytest": "pytest"}
missing = [wheel for mod, wheel in need.items() if importlib.util.find_spec(mod) is None]
print("missing, carry as wheels:", ", ".join(missing) if missing else "nothing")
EOF
    "$PYTHON" -c 'import colide_core, sklearn, scipy, pandas, networkx; print("colide_core imports")' 2>&1
} > "$OUT/gpu_env.txt"
cat "$OUT/gpu_env.txt"
if [ "$part" != dry ] && ! "$PYTHON" -c 'import jax, sys; sys.exit(0 if any(d.platform == "gpu" for d in jax.devices()) else 1)' 2>/dev/null; then
    echo "gpu_check: JAX sees no GPU; nothing to measure (see $OUT/gpu_env.txt)" | tee -a "$OUT/gpu_env.txt"
    exit 3
fi

if [ "$part" = all ] || [ "$part" = host ] || [ "$part" = dry ]; then
    # One device inverse / solve / slogdet against the block inverse; then CoLiDE-NV's whole fit on
    # the device (ER4, n = 2d, the paper's schedule, each fit capped by max_time and marked when it
    # stops), at d <= inverse_max_d once with each inverse: seconds, seconds in the compiled loop,
    # the host's share.
    timeout "$host_timeout" "$PYTHON" benchmarks/bench_jax_host.py --device "$device" --sizes "$sizes" \
        --max-time "$max_time" --schedule "${GPU_SCHEDULE:-paper}" --compare-max-d 200 --linalg "$linalg" \
        --inverse "$inverse" --inverse-max-d "$inverse_max_d" --out "$OUT/gpu_host.md"
    rc=$?
    [ $rc -eq 124 ] && echo "gpu_check: the host part hit its ${host_timeout} s cap; $OUT/gpu_host.md has the fits done"
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
fi

if [ "$part" = all ] || [ "$part" = tests ] || [ "$part" = alltests ]; then
    # The whole loop's tests on the GPU (COLIDE_JAX_TEST_DEVICE): the numpy solver's checkpoints and
    # iterates, callback / Stop / max_time, and the device polishing's steps against the host's
    # (its four cases, ~15 s on the 2-core CPU); "alltests" adds the rest of the polishing's tests
    # and issue 33's backend tests.
    files="tests/test_jax_loop.py tests/test_jax_polish.py::test_the_device_polishing_takes_the_hosts_steps"
    [ "$part" = alltests ] && files="tests/test_jax_loop.py tests/test_jax_polish.py tests/test_jax_backend.py"
    COLIDE_JAX_TEST_DEVICE=gpu timeout "${GPU_TESTS_TIMEOUT:-150}" "$PYTHON" -m pytest -q -p no:cacheprovider $files \
        > "$OUT/gpu_tests.txt" 2>&1
    rc=$?
    tail -n 15 "$OUT/gpu_tests.txt"
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
fi

if [ "$part" = bench ]; then
    # Issue 33's table: the step on the GPU and the one-thread CPU step beside it up to d = 1000.
    timeout "${GPU_BENCH_TIMEOUT:-540}" "$PYTHON" benchmarks/bench_gpu.py --sizes "${GPU_SIZES:-200,1000,2000,4000}" --settings NV \
        --backends cpu,gpu --cpu-max-d 1000 --cpu-fit-max-d 0 --steps 20 --max-time "${GPU_MAX_TIME:-100}" --timeout 240 \
        --out "$OUT/gpu_bench.md"
    rc=$?
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
fi
exit $status
