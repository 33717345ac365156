"""The experiment ranking's Meek phase (issue 53, high 1): before and after, per graph scored.

For each case, one graph G and every node as a candidate, times the phase
``rank_interventions`` runs per bootstrap graph: the I-essential graph of G under the current
(observational) family, and for every candidate t the I-essential graph under the family plus {t}.

* **before**: the closure of issue 40 (kept here verbatim as the reference): every candidate closed
  from scratch, and the d x d skeleton rebuilt for every undirected edge on every pass
  (O(E d^2) per pass);
* **after**: ``colide_core.evaluation.planning._settled``: the skeleton built once, each candidate
  closed incrementally from the graph under the family, checking only edges near what changed.

Both must give the same masks (checked on every case). Cases: the CoLiDE-NV fit (library
defaults, threshold 0.3) of simulated ER2 data with n = 2,000 rows (the Learn page's default
simulation) at d = 50 and 100, and a complete DAG at d = 100 (what lambda1 = 0.001 and threshold 0
fit: 4,950 edges, every one undirected in the CPDAG).

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.bench_meek [--skip-before-dense]

Prints a paste-ready markdown table (seconds per graph; x201 graphs is the page's maximum).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks._common import markdown_table
from colide_core import CoLiDE
from colide_core.data.simulate import simulate_dataset
from colide_core.evaluation import planning


# --- the reference: issue 40's closure, verbatim --------------------------------------------------

def _old_meek_closure(D, U):
    changed = True
    while changed:
        changed = False
        xs, ys = np.nonzero(np.triu(U))
        for a, b in zip(xs.tolist(), ys.tolist()):
            if not U[a, b]:
                continue
            adj = D | D.T | U
            for x, y in ((a, b), (b, a)):
                if _old_forced(x, y, D, U, adj):
                    D[x, y] = True
                    U[x, y] = U[y, x] = False
                    changed = True
                    break
    return D, U


def _old_forced(x, y, D, U, adj):
    if np.any(D[:, x] & ~adj[:, y]):
        return True
    if np.any(D[x] & D[:, y]):
        return True
    cs = np.flatnonzero(U[x] & D[:, y])
    if cs.size >= 2:
        sub = adj[np.ix_(cs, cs)]
        np.fill_diagonal(sub, True)
        if not sub.all():
            return True
    for c in np.flatnonzero(U[x] & ~adj[:, y]):
        if c != y and np.any(D[c] & D[:, y] & adj[x]):
            return True
    return False


def _old_essential(A, M, vs):
    D = A & (vs | M)
    U = A & ~D
    U = U | U.T
    D, U = _old_meek_closure(D, U)
    return D.astype(np.int8) + 2 * U.astype(np.int8)


def _old_settled(A, M, candidates):
    d = A.shape[0]
    skeleton = A | A.T
    vs = planning._v_structure_edges(A)
    before = _old_essential(A, M, vs) == 2
    out = {}
    for t in candidates:
        Mt = M.copy()
        Mt[t, :] = True
        Mt[:, t] = True
        Mt[t, t] = False
        new = before & ~(_old_essential(A, Mt, vs) == 2) if before.any() else np.zeros((d, d), dtype=bool)
        out[t] = np.triu(new | (skeleton & Mt & ~M))
    return out


# --- cases ------------------------------------------------------------------------------------

def _fitted(d, seed=0):
    X = simulate_dataset(n_nodes=d, n_samples=2000, graph="er", degree=2, random_state=seed).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        A = CoLiDE("nv").fit(np.asarray(X, float)).adjacency_ != 0
    np.fill_diagonal(A, False)
    return A


def _complete(d, seed=0):
    order = np.random.default_rng(seed).permutation(d)
    A = np.zeros((d, d), dtype=bool)
    for i in range(d):
        A[order[i], order[i + 1:]] = True
    return A


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-before-dense", action="store_true", help="skip the slow reference on the dense case")
    args = ap.parse_args(argv)
    cases = [("ER2 fit, d = 50", _fitted(50)), ("ER2 fit, d = 100", _fitted(100)),
             ("complete DAG, d = 100", _complete(100))]
    rows = []
    for name, A in cases:
        d = A.shape[0]
        M = planning._family_mask(d, [frozenset()])
        cand = list(range(d))
        undirected = int(np.triu(planning._essential(A, M) == 2).sum())
        t0 = time.perf_counter()
        new = planning._settled(A, M, cand)
        t_new = time.perf_counter() - t0
        if args.skip_before_dense and "complete" in name:
            t_old, same = float("nan"), "not run"
        else:
            t0 = time.perf_counter()
            old = _old_settled(A, M, cand)
            t_old = time.perf_counter() - t0
            same = "yes" if all((old[t] == new[t]).all() for t in cand) else "NO"
        rows.append([name, int(A.sum()), undirected, f"{t_old:.2f}", f"{t_new:.3f}",
                     f"{t_old / t_new:.0f}x" if t_old == t_old else "",
                     f"{201 * t_old / 60:.1f} min" if t_old == t_old else "", f"{201 * t_new:.1f} s", same,
                     f"{undirected * d * 201:,}"])
    print("\n".join(markdown_table(
        ["graph", "edges", "undirected (CPDAG)", "before (s / graph)", "after (s / graph)", "speed-up",
         "before x201", "after x201", "same masks", "work x201 (planning_work)"], rows)))


if __name__ == "__main__":
    main()
