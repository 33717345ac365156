"""The bootstrap's summary by blocks of edges: numpy's numbers, bit for bit, without the full-size temporaries.

``_summarise_boot`` used to call ``adj.std(axis=0)`` on the stacked samples (``n_boot x d x d``
float64), which makes a temporary as large as the samples (and ``adj != 0`` one an eighth of it):
the bootstrap's peak was 3.2 times its samples. ``_edge_moments`` summarises a block of edges at a
time; numpy sums along the samples axis one sample after another both for the whole array and
for a block of two columns or more, so the numbers are the same to the last bit, which the
edge tables' pinned intervals rely on.
"""
import tracemalloc

import numpy as np
import pytest

from colide_core.evaluation.stability import _MOMENT_BLOCKS, _edge_moments, _summarise_boot


def _samples(n, d, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    adj = (rng.standard_normal((n, d, d)) + rng.uniform(-3, 3, (d, d))) * scale
    adj[rng.random(adj.shape) < 0.5] = 0.0  # absent edges count as weight 0
    return adj


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 17, 100, 333])
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 11, 33])
def test_the_moments_are_numpys_to_the_last_bit(n, d):
    # d = 1: one block of one column (as the whole array); d = 3: 9 edges in blocks of 2, 2, 2, 3
    # (a last block of one column would be summed pairwise, so it joins the one before it)
    for seed, scale in ((n * 100 + d, 1.0), (n * 100 + d + 1, 1e8)):
        adj = _samples(n, d, seed, scale)
        frequency, mean, std = _edge_moments(adj)
        assert np.array_equal(frequency, (adj != 0).mean(axis=0))
        assert np.array_equal(mean, adj.mean(axis=0))
        assert np.array_equal(std, adj.std(axis=0))
        assert frequency.shape == mean.shape == std.shape == (d, d)
        assert frequency.dtype == mean.dtype == std.dtype == np.float64


def test_the_summary_is_numpys_on_a_bootstraps_outputs():
    d, n = 12, 40
    adj = _samples(n, d, 5)
    outputs = [(a, np.full(d, 1.0 + b), b % 3 != 0, None) for b, a in enumerate(adj)]
    outputs.insert(3, (None, None, False, "a failed fit"))
    res = _summarise_boot(outputs, n + 1, d, None, False)
    assert np.array_equal(res.adjacency_samples, adj)
    assert np.array_equal(res.frequency, (adj != 0).mean(axis=0))
    assert np.array_equal(res.weight_mean, adj.mean(axis=0))
    assert np.array_equal(res.weight_std, adj.std(axis=0))
    assert (res.n_ok, res.n_failed, res.n_not_converged) == (n, 1, 14)


def test_the_summary_holds_the_stack_and_one_block_not_a_second_copy():
    # 200 samples of 100 x 100 weights: 16,000,000 bytes. The stack is one copy; the summary's
    # temporaries are a block's (1/16 of the edges: its != 0 and its std's difference), 1.1 MB.
    # Before: the stack, adj != 0 (2 MB) and std's full-size temporary (16 MB): 2.13 x the samples.
    d, n = 100, 200
    adj = _samples(n, d, 9)
    outputs = [(a, None, True, None) for a in adj]
    samples = adj.nbytes
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        res = _summarise_boot(outputs, n, d, None, False)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    print("summary peak / samples", peak / samples)
    assert samples <= peak <= samples * (1 + 1.5 * (1 + 1 / 8) / _MOMENT_BLOCKS) + 3 * 8 * d * d + 4096
    assert np.array_equal(res.weight_std, adj.std(axis=0))
