"""Simulate and Compare pages: widget state -> :func:`colide_core.data.simulate.simulate_dataset`.

A thin adapter: :class:`SimConfig` holds the Simulate page's widget values, :meth:`SimConfig.spec`
turns them into the core protocol's settings, and every draw (here, on the Compare page through
:func:`colide_core.run.executor.synthetic_task`, in the CLI and the benchmarks) is made by
``colide_core.data.simulate.simulate_dataset``, so a seed gives the same data everywhere.

Convention: ``X`` has shape ``(n_samples, n_nodes)``; ``W[i, j] != 0`` means the edge i -> j and
the SEM is ``x_j = sum_i W[i, j] x_i + z_j``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

from colide_core import defaults

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
        are uniform on ``[-high, -low] U [low, high]`` (default ``colide_core.defaults.SIM_W_RANGE``,
        shared with the CLI's ``simulate``).
    n : int
        Number of samples.
    standardize : bool
        Scale every column to unit variance after sampling (removes varsortability).
    interventions : int
        Interventional conditions added after the ``n`` observational rows (0: none), each with
        ``iv_targets`` random hard interventions and ``n`` rows
        (:func:`colide_core.data.simulate.simulate_dataset`'s ``interventions``).
    iv_targets : int
        Nodes each interventional condition targets.
    mean_shift : float
        Standard deviation of each condition's per-node intercept shift (0: none).
    """

    d: int = 10
    degree: float = 2.0
    graph: str = "ER"
    noise: str = "gaussian"
    variance: str = "NV"
    noise_var: float = 1.0
    noise_var_range: tuple = (0.5, 10.0)
    w_range: tuple = defaults.SIM_W_RANGE
    n: int = 1000
    standardize: bool = False
    interventions: int = 0
    iv_targets: int = 1
    mean_shift: float = 0.0

    def intervention_spec(self):
        """The ``interventions`` mapping of ``simulate_dataset``, or None without interventions."""
        if not self.interventions:
            return None
        return {"n_conditions": int(self.interventions), "n_targets": int(self.iv_targets),
                "mean_shift": float(self.mean_shift)}

    def spec(self) -> dict:
        """The settings of :func:`colide_core.data.simulate.simulate_dataset` these widgets stand for.

        Returns
        -------
        dict
            Keys of ``colide_core.data.simulate.DATASET_DEFAULTS`` (``d`` -> ``n_nodes``, ``n`` ->
            ``n_samples``, the weight range given explicitly).
        """
        return {"graph": self.graph, "degree": float(self.degree), "n_nodes": int(self.d),
                "n_samples": int(self.n), "noise": self.noise, "variance": self.variance,
                "noise_var": float(self.noise_var),
                "noise_var_range": [float(v) for v in self.noise_var_range],
                "w_range": [float(v) for v in self.w_range], "standardize": bool(self.standardize)}

    def describe(self) -> str:
        """One line such as "ER2, d=10, n=1000, gaussian noise, NV σ² ∈ [0.5, 10]" (with interventions,
        "n=1000 per condition (4,000 rows)" and the conditions and targets)."""
        var = (f"EV σ² = {self.noise_var:g}" if self.variance == "EV"
               else f"NV σ² ∈ [{self.noise_var_range[0]:g}, {self.noise_var_range[1]:g}]")
        std = ", standardised" if self.standardize else ""
        k, t = int(self.interventions), int(self.iv_targets)
        # with interventions n is per condition: say so, and how many rows that makes (issue 41:
        # "n=1000" stood beside 4,000 samples)
        iv = "" if not k else (
            f", + {k} interventional condition{'s' if k != 1 else ''} on {t} node{'s' if t != 1 else ''} each"
            + (f" (shift sd {self.mean_shift:g})" if self.mean_shift else ""))
        n = f"n={self.n}" if not k else f"n={self.n} per condition ({(k + 1) * self.n:,} rows)"
        return (f"{self.graph}{self.degree:g}, d={self.d}, {n}, {self.noise} noise, {var}, "
                f"|w| ∈ [{self.w_range[0]:g}, {self.w_range[1]:g}]{std}{iv}")


def simulate_arrays(config: SimConfig, seed: int):
    """Draw one dataset: ``colide_core.data.simulate.simulate_dataset(config.spec(), seed)``.

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
        From ``colide_core.data.simulate`` on invalid parameters.
    """
    from colide_core.data.simulate import simulate_dataset

    sim = simulate_dataset(config.spec(), int(seed))
    return sim.X, sim.W_true, sim.noise_std


def simulate_dataset(config: SimConfig, seed: int) -> Dataset:
    """The draw of :func:`simulate_arrays` as a :class:`dashboard.data.Dataset` (nodes X1..Xd).

    The ground truth ``B_true`` and ``sigma_true`` come from the core draw; the true weights and
    the configuration are kept in ``meta`` ("W_true", "config", "seed", "varsortability").
    """
    from colide_core.data.simulate import simulate_dataset as draw, varsortability

    sim = draw(config.spec(), int(seed), interventions=config.intervention_spec())
    names = [f"X{j + 1}" for j in range(sim.X.shape[1])]
    design = {} if sim.conditions is None else {
        "conditions": [str(c) for c in sim.conditions],
        "targets": {str(c): [names[j] for j in nodes] for c, nodes in sim.targets.items()}}
    try:
        vs = float(varsortability(sim.X, sim.W_true))
    except ValueError:
        vs = float("nan")
    return make_dataset(
        f"Simulated {config.describe()}, seed {int(seed)}",
        pd.DataFrame(sim.X, columns=names, copy=False),  # make_dataset makes the one copy
        B_true=sim.B_true,
        sigma_true=sim.noise_std,
        source="simulated",
        meta={"W_true": sim.W_true, "config": asdict(config), "seed": int(seed), "varsortability": vs, **design},
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
        interventions=int(ss["sim_interventions"]),
        iv_targets=int(ss["sim_iv_targets"]),
        mean_shift=float(ss["sim_mean_shift"]),
    )
