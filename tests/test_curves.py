"""Hand-worked tests of colide_core.evaluation.curves and colide_core.evaluation._metrics.tetrad_metrics.

Convention: A[i, j] != 0 means i -> j; metrics take (B_true, W).
"""
import math

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

import colide_core
from colide_core import curves
from colide_core.evaluation._metrics import tetrad_metrics
from colide_core.solver.path import LambdaPath

# Truth 0 -> 1 -> 2. Raw weights: the two true edges score 0.9 and 0.4; the non-edges 0 -> 2
# (0.5) and 2 -> 0 (0.1); 1 -> 0 and 2 -> 1 score 0.
B = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]])
W = np.array([[0.0, 0.9, 0.5], [0.0, 0.0, 0.4], [0.1, 0.0, 0.0]])


def test_roc_and_pr_by_hand_and_equal_to_sklearn():
    c = curves.edge_score_curves(B, W)
    assert (c.n_pos, c.n_neg) == (2, 4)
    # AUROC = P(score of a true edge > score of a non-edge): 0.9 beats all 4 non-edges,
    # 0.4 beats 0.1, 0, 0 (3 of 4): (4 + 3) / (2 * 4) = 7/8.
    assert c.auroc == pytest.approx(7 / 8)
    # Ranking 0.9 (+), 0.5 (-), 0.4 (+): average precision = 1/2 * 1 + 1/2 * 2/3 = 5/6.
    assert c.auprc == pytest.approx(5 / 6)
    # The same as scikit-learn on the off-diagonal pairs in row-major order.
    y = [1, 0, 0, 1, 0, 0]      # (0,1) (0,2) (1,0) (1,2) (2,0) (2,1)
    s = [0.9, 0.5, 0.0, 0.4, 0.1, 0.0]
    assert c.auroc == roc_auc_score(y, s) and c.auprc == average_precision_score(y, s)
    assert c.fpr[0] == 0 and c.tpr[-1] == 1 and c.recall[0] == 1


def test_roc_undefined_without_true_edges():
    c = curves.edge_score_curves(np.zeros((3, 3)), W)
    assert c.n_pos == 0 and math.isnan(c.auroc) and math.isnan(c.auprc)


def test_tetrad_metrics_by_hand():
    # Truth 0 -> 1 -> 2; estimate 1 -> 0, 1 -> 2, 0 -> 2.
    E = np.array([[0, 0, 1], [1, 0, 1], [0, 0, 0]])
    m = tetrad_metrics(B, E)
    # Adjacencies: truth {01, 12}, estimate {01, 12, 02}: 2 shared -> precision 2/3, recall 2/2.
    assert m["adjacency_precision"] == pytest.approx(2 / 3) and m["adjacency_recall"] == 1.0
    # Arrowheads: truth at 1 (0->1) and 2 (1->2); estimate at 0 (1->0), 2 (1->2), 2 (0->2):
    # only 1 -> 2's is shared -> precision 1/3, recall 1/2.
    assert m["arrowhead_precision"] == pytest.approx(1 / 3) and m["arrowhead_recall"] == 0.5
    # For DAGs, arrowhead recall is TPR and arrowhead precision is 1 - FDR.
    ev = colide_core.evaluate(B, E)
    assert m["arrowhead_recall"] == ev["tpr"] and m["arrowhead_precision"] == pytest.approx(1 - ev["fdr"])
    assert math.isnan(tetrad_metrics(B, np.zeros((3, 3)))["adjacency_precision"])


def test_threshold_curve_by_hand():
    t = curves.threshold_curve(B, W)
    assert list(t["threshold"]) == [0.0, 0.1, 0.4, 0.5, 0.9]
    # t = 0: 0->1, 0->2, 1->2, 2->0 is cyclic (0->2->0); threshold_to_dag drops the weakest
    # (2->0, 0.1): 3 edges, one extra (0->2): SHD 1. t = 0.1: the same 3 edges.
    # t = 0.4: 0->1 and 0->2 (0.4 is dropped: |w| must exceed t): 1->2 missing, 0->2 extra: SHD 2.
    # t = 0.5: 0->1 only: SHD 1. t = 0.9: empty: SHD 2.
    assert list(t["edges"]) == [3, 3, 2, 1, 0]
    assert list(t["shd"]) == [1, 1, 2, 1, 2]
    assert list(t["arrowhead_recall"]) == [1.0, 1.0, 0.5, 0.5, 0.0]
    assert t["adjacency_precision"].iloc[0] == pytest.approx(2 / 3)


def _path(adjacency, bic):
    adjacency = np.asarray(adjacency, dtype=float)
    n_l, n_t, d, _ = adjacency.shape
    return LambdaPath(
        lambdas=np.geomspace(0.01, 0.1, n_l), thresholds=np.linspace(0.1, 0.3, n_t),
        W=np.zeros((n_l, d, d)), adjacency=adjacency, edge_counts=(adjacency != 0).sum(axis=(2, 3)),
        bic=np.asarray(bic, dtype=float), sigma=[None] * n_l, objective=np.zeros(n_l),
        n_iter=np.zeros(n_l, dtype=int), fit_time=np.zeros(n_l), converged=np.ones(n_l, dtype=bool),
        variant="nv", warm_start=True, node_names=None, n_samples=100)


def test_stable_region_by_hand():
    a = np.array([[0, 1], [0, 0]])
    b = np.array([[0, 0], [0, 0]])
    c = np.array([[0, 0], [1, 0]])
    # Grid (2 lambdas x 3 thresholds):  a a b   ->  plateau of a: 3 cells (connected),
    #                                   a c b       b: 2 cells, c: 1 cell.
    p = _path([[a, a, b], [a, c, b]], bic=[[5, 5, 9], [5, 1, 9]])
    sr = curves.stable_region(p)
    assert sorted(sr.sizes.tolist()) == [1, 2, 3]
    assert sr.mask.tolist() == [[True, True, False], [True, False, False]]
    assert sr.best_bic == (1, 1) and not sr.best_bic_stable  # the lowest BIC (c) is a single cell
    # Two separate cells with the same graph are two plateaus.
    p2 = _path([[a, b, a]], bic=[[1, 2, 1]])
    assert curves.stable_region(p2).sizes.tolist() == [1, 1, 1]
