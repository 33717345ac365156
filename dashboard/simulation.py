"""Simulated datasets for the Simulate and Compare pages (wraps ``colide_core.simulate``).

Convention: ``X`` has shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j and
the SEM is ``x_j = sum_i W[i, j] x_i + z_j``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from dashboard.data import Dataset, make_dataset

__all__ = ["SimConfig", "simulate_arrays", "simulate_dataset", "config_from_state"]


@dataclass(frozen=True)
class SimConfig:
    """Parameters of one synthetic linear-SEM benchmark (everything but the seed).

    Attributes
    ----------
    d : int
        Number of nodes (>= 2).
    degree : float
        Expected edges per node ``k`` of ERk / SFk (about ``k * d`` edges).
    graph : {"ER", "SF"}
        Erdos-Renyi or scale-free DAG.
    noise : {"gaussian", "exponential", "laplace", "gumbel"}
        Noise law (each scaled to the requested variance).
    variance : {"EV", "NV"}
        Equal noise variance for all nodes, or one variance per node drawn uniformly from
        ``noise_var_range``.
    noise_var : float
        The common noise variance for EV (squared data units, > 0).
    noise_var_range : tuple of float
        ``(low, high)`` variance range for NV (the paper uses (0.5, 10)).
    w_range : tuple of float
        ``(low, high)`` magnitude range of the edge weights; signs are drawn at random, i.e. weights
        are uniform on ``[-high, -low] U [low, high]`` (the paper: (0.5, 2)).
    n : int
        Number of samples.
    standardize : bool
        Scale every column to unit variance after sampling (removes varsortability).
    """

    d: int = 10
    degree: float = 2.0
    graph: str = "ER"
    noise: str = "gaussian"
    variance: str = "NV"
    noise_var: float = 1.0
    noise_var_range: tuple = (0.5, 10.0)
    w_range: tuple = (0.5, 2.0)
    n: int = 1000
    standardize: bool = False

    def describe(self) -> str:
        """One line such as "ER2, d=10, n=1000, gaussian noise, NV σ² ∈ [0.5, 10]"."""
        var = (f"EV σ² = {self.noise_var:g}" if self.variance == "EV"
               else f"NV σ² ∈ [{self.noise_var_range[0]:g}, {self.noise_var_range[1]:g}]")
        std = ", standardised" if self.standardize else ""
        return (f"{self.graph}{self.degree:g}, d={self.d}, n={self.n}, {self.noise} noise, {var}, "
                f"|w| ∈ [{self.w_range[0]:g}, {self.w_range[1]:g}]{std}")


def simulate_arrays(config: SimConfig, seed: int):
    """Draw one dataset from ``config`` with ``np.random.default_rng(seed)``.

    Parameters
    ----------
    config : SimConfig
    seed : int

    Returns
    -------
    X : ndarray of shape (n, d)
    W_true : ndarray of shape (d, d)
        True weights in the units of ``X`` (rescaled when standardised: ``W[i, j] s_i / s_j``).
    sigma_true : ndarray of shape (d,)
        True noise standard deviations in the units of ``X`` (``sigma_j / s_j`` when
        standardised, ``s_j`` being the column's standard deviation before scaling).

    Raises
    ------
    ValueError
        From ``colide_core.simulate`` on invalid parameters.

    Notes
    -----
    Calls ``simulate_dag``, ``simulate_parameters``, ``draw_noise_variances`` (NV) and
    ``simulate_linear_sem`` of ``colide_core.simulate`` with one shared generator, so a seed fixes
    the graph, the weights, the variances and the samples.
    """
    from colide_core import simulate as sim

    rng = np.random.default_rng(int(seed))
    lo, hi = (float(v) for v in config.w_range)
    B = sim.simulate_dag(int(config.d), float(config.degree), graph=config.graph.lower(), random_state=rng)
    W = sim.simulate_parameters(B, w_ranges=((-hi, -lo), (lo, hi)), random_state=rng)
    if config.variance == "EV":
        noise_var = float(config.noise_var)
    else:
        vlo, vhi = (float(v) for v in config.noise_var_range)
        noise_var = sim.draw_noise_variances(int(config.d), vlo, vhi, random_state=rng)
    X, sigma = sim.simulate_linear_sem(W, int(config.n), noise=config.noise, noise_var=noise_var,
                                       random_state=rng)
    if config.standardize:
        scale = X.std(axis=0)
        X = sim.standardize(X)
        W = W * scale[:, None] / scale[None, :]
        sigma = sigma / scale
    return X, W, np.asarray(sigma, dtype=float)


def simulate_dataset(config: SimConfig, seed: int) -> Dataset:
    """:func:`simulate_arrays` wrapped as a :class:`dashboard.data.Dataset` (nodes X1..Xd).

    The ground truth ``B_true`` is the support of the true weights; the weights themselves and
    the configuration are kept in ``meta`` ("W_true", "config", "seed", "varsortability").
    """
    from colide_core import simulate as sim

    X, W, sigma = simulate_arrays(config, seed)
    names = [f"X{j + 1}" for j in range(X.shape[1])]
    try:
        vs = float(sim.varsortability(X, W))
    except ValueError:
        vs = float("nan")
    return make_dataset(
        f"Simulated {config.describe()}, seed {int(seed)}",
        pd.DataFrame(X, columns=names),
        B_true=(W != 0).astype(float),
        sigma_true=sigma,
        source="simulated",
        meta={"W_true": W, "config": asdict(config), "seed": int(seed), "varsortability": vs},
    )


def config_from_state(ss) -> SimConfig:
    """Build a :class:`SimConfig` from the Simulate page's widget values in session state ``ss``."""
    return SimConfig(
        d=int(ss["sim_d"]),
        degree=float(ss["sim_degree"]),
        graph=str(ss["sim_graph_type"]),
        noise=str(ss["sim_noise_type"]),
        variance=str(ss["sim_variance"]),
        noise_var=float(ss["sim_noise_var"]),
        noise_var_range=tuple(float(v) for v in ss["sim_noise_var_range"]),
        w_range=tuple(float(v) for v in ss["sim_w_range"]),
        n=int(ss["sim_n"]),
        standardize=bool(ss["sim_standardize"]),
    )
