"""Shareable Learn views: the dataset choice, λ, threshold, noise model and layout in the URL.

A teacher prepares one link per lesson step; a refresh restores the view (issue 28, point 4).
The query string is **hostile input** (anyone can send a link): every parameter is parsed
strictly, bounded before use, and checked against the same bounds as its widget; an unknown or
invalid parameter is ignored and named in a message, never raised. Uploaded data cannot travel
in a URL: a link made on an upload says so when opened, and the view falls back to Sachs.

Parameters written (all optional when read):

``data``
    ``sachs``, ``lesson``, ``sim``, ``net`` or ``upload``.
``rows``, ``truth``
    The Sachs version and ground truth (with ``data=sachs``; :data:`dashboard.data.SACHS_ROW_LABELS`).
``lesson``
    A key of :data:`colide_core.data.lessons.LESSONS` (with ``data=lesson``).
``net``, ``n``, ``seed``, ``iv``
    A bnlearn network (with ``data=net``): a key of :data:`colide_core.data.networks.NETWORKS`, its
    rows, seed and interventional conditions (:func:`dashboard.data.network_dataset`), within the
    Data page's bounds; a link cannot draw more than :data:`colide_core.defaults.LIVE_MAX_CELLS`
    values.
``graph``, ``k``, ``d``, ``n``, ``noise``, ``var``, ``seed``, ``std``, ``nv``, ``nvr``, ``w``, ``iv``, ``ivt``, ``ivs``
    The simulation (with ``data=sim``): :class:`dashboard.simulation.SimConfig` fields and the
    seed, within the Simulate page's bounds (``nvr`` and ``w`` are ``low,high``; ``iv``, ``ivt``,
    ``ivs`` the interventional conditions, targets per condition and mean shift).
``lam``, ``thr``, ``model``, ``layout``
    Learn's λ (within :data:`colide_core.defaults.LAMBDA1_RANGE`), threshold (within
    ``THRESHOLD_RANGE``), noise model (``EV``, ``NV``, ``Both``) and layout (``circle``,
    ``topdown``).
``pnode``, ``pdo``, ``pk``, ``pfit``
    The Predict page's question (issue 48, m-5): the node intervened on (one of the dataset's node
    names, exactly), ``do(node = pdo)`` in data units or a shift by ``pk`` standard deviations
    (within the widget's [-10, 10]), and the fit used (``EV`` or ``NV``). Written by the Predict
    page only; the Learn page's links leave them out.
``solver``, ``max_iter``, ``topo_sizes``, ... (:data:`SETTING_KEYS`)
    Every other run setting the dashboard offers (the sidebar's solver and the advanced form's
    rows of :data:`colide_core.settings.SETTINGS`), under its own name, written only when it
    differs from its default (:meth:`~colide_core.settings.Setting.format`), read back with
    :meth:`~colide_core.settings.Setting.parse` and checked within the dashboard's bounds
    (:data:`colide_core.settings.INTERACTIVE`); a setting the link's solver ignores is ignored and
    named (issue 47: a link made on a TOPO view opened with the fast solver). The settings the
    server chooses (``device``, ``random_state``, ``record_W``) never travel.

Pure functions (:func:`view_params`, :func:`parse_view`) do the work and are tested directly;
:func:`restore_from_url` and :func:`write_url` are the page's two calls.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from colide_core.data.io import INTERACTIVE_MAX_NODES
from colide_core.data.networks import NETWORKS
from colide_core.data.simulate import INTERACTIVE_BOUNDS
from colide_core.defaults import LAMBDA1_RANGE, LIVE_MAX_CELLS, THRESHOLD_RANGE
from colide_core.settings import INTERACTIVE, SETTINGS, check_setting, check_settings, ignored_settings

__all__ = ["URL_KEYS", "PREDICT_KEYS", "SETTING_KEYS", "SIM_BOUNDS", "View", "view_params", "parse_view",
           "predict_params", "parse_predict", "restore_from_url", "write_url"]

#: The run settings a link carries under their own names: every row the dashboard offers (its own
#: widget or the advanced form), but the three with a short key of their own (``model``, ``lam``,
#: ``thr``). Derived from the table: a new setting travels by being declared.
SETTING_KEYS = tuple(row.name for row in SETTINGS
                     if row.dashboard in ("own", "advanced") and row.name not in ("variant", "lambda1", "threshold"))

#: The Predict page's own query parameters (:func:`predict_params`).
PREDICT_KEYS = ("pnode", "pdo", "pk", "pfit")
#: Every query parameter this module reads or writes (others in the URL are left alone).
URL_KEYS = ("data", "rows", "truth", "lesson", "net", "graph", "k", "d", "n", "noise", "var", "seed", "std", "nv", "nvr", "w",
            "iv", "ivt", "ivs",
            "lam", "thr", "model", "layout") + SETTING_KEYS + PREDICT_KEYS
#: The Predict page's shift widget's bounds (k standard deviations) and the largest |value| of ``do``.
PREDICT_K_RANGE = (-10.0, 10.0)
PREDICT_MAX_ABS_VALUE = 1e12
#: Longest node name a link may carry (a node name is at most this long: colide_core.data.io).
_MAX_NODE_CHARS = 256

#: URL parameter -> the simulation setting it carries (``colide_core.data.simulate.INTERACTIVE_BOUNDS``).
_SIM_KEYS = {"d": "n_nodes", "k": "degree", "n": "n_samples", "seed": "seed", "nv": "noise_var",
             "nvr": "noise_var_range", "w": "w_range", "iv": "n_conditions", "ivt": "n_targets", "ivs": "mean_shift"}
#: The Simulate page's widget bounds, per URL parameter: (type, low, high), from the one table;
#: a link's d stops at the CPU's node limit (a link cannot start a GPU-sized simulation).
SIM_BOUNDS = {key: INTERACTIVE_BOUNDS[name] for key, name in _SIM_KEYS.items()}
SIM_BOUNDS["d"] = (int, INTERACTIVE_BOUNDS["n_nodes"][1], INTERACTIVE_MAX_NODES)
_CHOICES = {"graph": ("ER", "SF"), "noise": ("gaussian", "exponential", "laplace", "gumbel"),
            "var": ("EV", "NV"), "model": ("EV", "NV", "Both"), "layout": ("circle", "topdown"),
            "std": ("0", "1"), "rows": ("baseline", "utigsp", "all"), "truth": ("consensus17", "utigsp18", "cmu20"),
            "net": tuple(NETWORKS)}
_LAYOUTS = {"circle": "Circle", "topdown": "Top-down"}
#: Longest parameter value read (a number, a key or a choice is far shorter).
_MAX_VALUE_CHARS = 64
#: Longest value of a run setting (:data:`SETTING_KEYS`): a schedule of ``MAX_STAGES`` entries fits.
_MAX_SETTING_CHARS = 256
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$")


@dataclass
class View:
    """A Learn view read from a URL.

    Attributes
    ----------
    data : {"sachs", "lesson", "sim", "net", "upload"} or None
        The dataset choice; None when the URL names none.
    lesson : str or None
    sim : dict
        :class:`dashboard.simulation.SimConfig` fields given (``d``, ``degree``, ...) and ``seed``;
        for ``data="net"``: ``net``, ``n``, ``seed``, ``iv``.
    widgets : dict
        Learn widget key -> value (``learn_lambda1``, ``learn_threshold``, ``learn_variant``,
        ``learn_layout``).
    settings : dict
        Run settings of :data:`SETTING_KEYS` given by the link, checked (the solver overrides).
    problems : list of str
        Parameters ignored, each with the reason (already safe to show: no user text is echoed
        beyond the parameter's name, which is one of :data:`URL_KEYS`).
    """

    data: str | None = None
    lesson: str | None = None
    sim: dict = field(default_factory=dict)
    widgets: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)


def _fmt(x) -> str:
    """A number as the shortest text that reads back the same (``repr`` of a float, ``str`` of an int)."""
    return str(int(x)) if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def view_params(ds, ss) -> dict:
    """The query parameters that describe the current Learn view.

    Parameters
    ----------
    ds : dashboard.data.Dataset
        The current dataset (``source``, ``meta``).
    ss : mapping
        The session state (Learn's widget keys).

    Returns
    -------
    dict of str -> str
        Keys from :data:`URL_KEYS`.
    """
    params = {}
    if ds.source == "sachs" and not ds.meta.get("transform"):
        params["data"] = "sachs"
        if "sachs_rows" in ds.meta:  # another version or truth than the default
            params.update(rows=ds.meta["sachs_rows"], truth=ds.meta["truth_name"])
    elif ds.source == "lesson" and ds.meta.get("lesson"):
        params.update(data="lesson", lesson=str(ds.meta["lesson"]))
    elif ds.source == "network" and ds.meta.get("network") and not ds.meta.get("transform"):
        params.update(data="net", net=str(ds.meta["network"]), n=_fmt(ds.meta["n"]), seed=_fmt(ds.meta["seed"]))
        if ds.meta.get("n_conditions"):
            params["iv"] = _fmt(ds.meta["n_conditions"])
    elif ds.source == "simulated" and "config" in ds.meta and not ds.meta.get("transform"):
        c = ds.meta["config"]
        params.update(data="sim", graph=c["graph"], k=_fmt(c["degree"]), d=_fmt(c["d"]), n=_fmt(c["n"]),
                      noise=c["noise"], var=c["variance"], seed=_fmt(ds.meta.get("seed", 0)),
                      std="1" if c["standardize"] else "0")
        if c["variance"] == "EV":
            params["nv"] = _fmt(c["noise_var"])
        else:
            params["nvr"] = ",".join(_fmt(v) for v in c["noise_var_range"])
        params["w"] = ",".join(_fmt(v) for v in c["w_range"])
        if c.get("interventions"):
            params.update(iv=_fmt(c["interventions"]), ivt=_fmt(c["iv_targets"]), ivs=_fmt(c["mean_shift"]))
    else:
        params["data"] = "upload"  # an upload or transformed data: the data cannot travel in a URL
    params["lam"] = _fmt(float(ss["learn_lambda1"]))
    params["thr"] = _fmt(float(ss["learn_threshold"]))
    params["model"] = str(ss["learn_variant"])
    params["layout"] = "topdown" if ss["learn_layout"] == "Top-down" else "circle"
    from dashboard.infra import state

    overrides = ss.get(state.SOLVER_OVERRIDES) or {}
    for row in SETTINGS:
        if row.name in SETTING_KEYS and overrides.get(row.name, row.default) not in (row.default, None):
            params[row.name] = row.format(overrides[row.name])
    return params


def _settings_of(raw, problems) -> dict:
    """The run settings of :data:`SETTING_KEYS` in ``raw`` (texts), each parsed and checked within the
    dashboard's bounds; together consistent (stages), and read by the link's solver. What fails is
    left out and named in ``problems`` (no user text echoed)."""
    from colide_core.exceptions import RunSettingsError

    out = {}
    for row in SETTINGS:
        if row.name not in SETTING_KEYS or row.name not in raw:
            continue
        try:
            out[row.name] = check_setting(row.name, row.parse(raw[row.name]), limits=INTERACTIVE)
        except (ValueError, TypeError):
            problems.append(f"{row.name}: not a value within the dashboard's bounds")
    def fits(settings):
        try:
            check_settings(settings, limits=INTERACTIVE)
            return True
        except RunSettingsError:
            return False

    # across settings (increasing sizes; stages of equal length, totals): a setting outside the stages
    # with the others' defaults, then the stages together
    stages = ("mu_schedule", "s_schedule", "max_iter", "checkpoint")
    for name in [k for k in out if k not in stages and not fits({k: out[k]})]:
        problems.append(f"{name}: does not fit the other settings within the dashboard's bounds")
        del out[name]
    if not fits(out):
        given = [k for k in stages if k in out]
        problems.append(f"{', '.join(given)}: {'does' if len(given) == 1 else 'do'} not fit together within the "
                        "dashboard's bounds")
        out = {k: v for k, v in out.items() if k not in stages}
    solver = out.get("solver", setting_default("solver"))
    for name in ignored_settings(out, solver):
        problems.append(f"{name}: not read by solver {solver}")
        del out[name]
    return out


def setting_default(name):
    """The library's default of the run setting ``name`` (:data:`colide_core.settings.SETTINGS`)."""
    from colide_core.settings import setting

    return setting(name).default


def _number(name, text, kind, low, high, problems):
    """``text`` as a number of ``kind`` in [low, high], or None (and a problem)."""
    if not _NUMBER.match(text):
        problems.append(f"{name}: not a number")
        return None
    value = float(text)
    if not math.isfinite(value) or not low <= value <= high:
        problems.append(f"{name}: outside [{low:g}, {high:g}]")
        return None
    if kind is int:
        if not value.is_integer():
            problems.append(f"{name}: not a whole number")
            return None
        return int(value)
    return value


def parse_view(query) -> View:
    """Read a Learn view from query parameters, strictly.

    Parameters
    ----------
    query : mapping of str -> str or list of str
        ``st.query_params`` (or a plain dict, in tests). For a repeated parameter the last value
        counts. Keys outside :data:`URL_KEYS` are ignored silently (they are not ours).

    Returns
    -------
    View
        What the URL asks for, with every invalid parameter left out and listed in ``problems``.
        Never raises for any input.

    Examples
    --------
    >>> v = parse_view({"data": "sachs", "lam": "0.1", "thr": "9", "model": "EV"})
    >>> v.data, v.widgets["learn_lambda1"], v.widgets["learn_variant"], v.problems
    ('sachs', 0.1, 'EV', ['thr: outside [0, 2]'])
    """
    view = View()
    raw = {}
    for key in URL_KEYS:
        if key not in query:
            continue
        value = query[key]
        if isinstance(value, (list, tuple)):
            value = value[-1] if value else ""
        value = str(value)
        if len(value) > (_MAX_SETTING_CHARS if key in SETTING_KEYS else _MAX_VALUE_CHARS):
            view.problems.append(f"{key}: too long")
            continue
        raw[key] = value.strip()

    for key, choices in _CHOICES.items():
        if key in raw and raw[key] not in choices:
            view.problems.append(f"{key}: not one of {', '.join(choices)}")
            del raw[key]

    data = raw.get("data")
    if data is not None and data not in ("sachs", "lesson", "sim", "net", "upload"):
        view.problems.append("data: not one of sachs, lesson, sim, net, upload")
        data = None
    if data == "net":
        if "net" not in raw:
            view.problems.append("net: missing (one of " + ", ".join(NETWORKS) + ")")
            data = None
        else:
            net = {"net": raw["net"], "n": 1000, "seed": 0, "iv": 0}
            for key in ("n", "seed", "iv"):
                if key in raw:
                    value = _number(key, raw[key], *SIM_BOUNDS[key], view.problems)
                    if value is not None:
                        net[key] = value
            view.sim = net
    if data == "lesson":
        from colide_core.data.lessons import LESSONS

        if raw.get("lesson") in LESSONS:
            view.lesson = raw["lesson"]
        else:
            view.problems.append("lesson: not a lesson of this version")
            data = None
    if data == "sim":
        sim = {}
        for key, field_name in (("d", "d"), ("k", "degree"), ("n", "n"), ("seed", "seed"), ("nv", "noise_var"),
                                ("iv", "interventions"), ("ivt", "iv_targets"), ("ivs", "mean_shift")):
            if key in raw:
                value = _number(key, raw[key], *SIM_BOUNDS[key], view.problems)
                if value is not None:
                    sim[field_name] = value
        for key, field_name in (("nvr", "noise_var_range"), ("w", "w_range")):
            if key in raw:
                parts = raw[key].split(",")
                values = [_number(key, p, *SIM_BOUNDS[key], view.problems) for p in parts] if len(parts) == 2 else None
                if values is None:
                    view.problems.append(f"{key}: not low,high")
                elif None not in values:
                    if values[0] > values[1]:
                        view.problems.append(f"{key}: low above high")
                    else:
                        sim[field_name] = tuple(values)
        for key, field_name in (("graph", "graph"), ("noise", "noise"), ("var", "variance")):
            if key in raw:
                sim[field_name] = raw[key]
        if "std" in raw:
            sim["standardize"] = raw["std"] == "1"
        view.sim = sim
    view.data = data
    if data == "sachs":
        view.sim = {"rows": raw.get("rows", "baseline"), "truth": raw.get("truth", "consensus17")}

    if "lam" in raw:
        lam = _number("lam", raw["lam"], float, *LAMBDA1_RANGE, view.problems)
        if lam is not None:
            view.widgets["learn_lambda1"] = lam
    if "thr" in raw:
        thr = _number("thr", raw["thr"], float, *THRESHOLD_RANGE, view.problems)
        if thr is not None:
            view.widgets["learn_threshold"] = thr
    if "model" in raw:
        view.widgets["learn_variant"] = raw["model"]
    if "layout" in raw:
        view.widgets["learn_layout"] = _LAYOUTS[raw["layout"]]
    view.settings = _settings_of(raw, view.problems)
    return view


def _dataset_of(view, current, ss):
    """The dataset a view names (None: keep ``current``), and a message about it (or None); the
    Data page's Sachs selectors (in the session state ``ss``) follow a link's Sachs version."""
    from dashboard.infra import state

    if view.data == "sachs":
        rows, truth = view.sim.get("rows", "baseline"), view.sim.get("truth", "consensus17")
        if (rows, truth) != ("baseline", "consensus17"):
            from dashboard.data import sachs_dataset

            ss["data_sachs_rows"], ss["data_sachs_truth"] = rows, truth
            return sachs_dataset(rows, truth), None
        return (None if current.source == "sachs" and not current.meta.get("transform") else state.sachs()), None
    if view.data == "lesson":
        from dashboard.lessons import lesson_dataset

        return lesson_dataset(view.lesson), None
    if view.data == "sim":
        from dashboard.simulation import SimConfig, simulate_dataset

        fields = {k: v for k, v in view.sim.items() if k != "seed"}
        config = replace(SimConfig(), **fields)
        if config.n * config.d * (1 + config.interventions) > LIVE_MAX_CELLS:  # a link costs no more than a live page
            return None, (f"The link asks for a simulation of {config.n:,} × {config.d} values, more than a link may "
                          f"start ({LIVE_MAX_CELLS:,}): make it on the Simulate page. Showing the current dataset.")
        if link_fit_units(config) > LINK_MAX_FIT_UNITS:
            return None, (f"The link asks for {1 + config.interventions} conditions on {config.d} nodes at "
                          f"{config.degree:g} edges per node, more than a link may start: make it on the Simulate "
                          "page (its fits then run as jobs with Stop). Showing the current dataset.")
        from dashboard.infra import memory  # the server-wide budget of all sessions' datasets (issue 53)

        refused = memory.simulation_refusal(config.n * (1 + config.interventions), config.d, "The link's simulation")
        if refused is not None:
            return None, refused + " Showing the current dataset."
        return simulate_dataset(config, int(view.sim.get("seed", 0))), None
    if view.data == "net":
        from colide_core.data.networks import network_available

        name, n, seed, k = view.sim["net"], int(view.sim["n"]), int(view.sim["seed"]), int(view.sim["iv"])
        d = NETWORKS[name].nodes
        if not network_available():
            return None, ("This link names the bnlearn network " + name + ", which needs the `networks` extra: "
                          "pip install 'colide-dashboard[networks]'. Showing the current dataset.")
        if n * d * (1 + k) > LIVE_MAX_CELLS:  # a link costs no more than a live page
            return None, (f"The link asks for {n * (1 + k):,} rows of {name} ({d} nodes), more than a link may start "
                          f"({LIVE_MAX_CELLS:,} values): load it on the Data page. Showing the current dataset.")
        if (1 + k) * d ** 2 > LINK_MAX_FIT_UNITS:
            return None, (f"The link asks for {1 + k} conditions on {d} nodes, more than a link may start: load it "
                          "on the Data page. Showing the current dataset.")
        from dashboard.caching.cached import cached_network_dataset

        ss["data_net_name"], ss["data_net_n"], ss["data_net_seed"], ss["data_net_iv"] = name, n, seed, k
        return cached_network_dataset(name, n, seed, k), None
    if view.data == "upload":
        return None, ("This link was made on uploaded data, which cannot travel in a URL: upload the file again "
                      "on the Data page. λ, threshold, noise model and layout are restored; the data shown is "
                      + ("Sachs." if current.source == "sachs" else "the current dataset."))
    return None, None


#: The most :func:`link_fit_units` a link may ask for (issue 42: a link's 51 conditions on 50 nodes made
#: 12.1 s live fits, against 0.19-0.59 s for one condition; 10 conditions there are 27,500 units).
LINK_MAX_FIT_UNITS = 100_000


def link_fit_units(config) -> float:
    """What a link's simulated dataset costs each fit, beyond its rows: ``(1 + K) d^2`` for the
    statistics of its K interventional conditions, times ``max(1, degree / 2)`` (denser graphs take
    more iterations).

    Parameters
    ----------
    config : dashboard.simulation.SimConfig

    Returns
    -------
    float
        E.g. 2,500 for d = 50 without interventions, 127,500 with 50 conditions.
    """
    return (1 + int(config.interventions)) * int(config.d) ** 2 * max(1.0, float(config.degree) / 2.0)


def predict_params(ss) -> dict:
    """The query parameters of the Predict page's question (added to :func:`view_params`'s).

    Parameters
    ----------
    ss : mapping
        The session state (the Predict page's widget keys, ``dashboard.infra.state.predict``).

    Returns
    -------
    dict of str -> str
        ``pnode``, ``pfit``, and ``pdo`` (a value) or ``pk`` (a shift); empty before the page
        picked a node.

    Examples
    --------
    >>> predict_params({"pred_node": "Raf", "pred_model": "NV", "pred_kind": "Shift by k sd", "pred_k": 2.0})
    {'pnode': 'Raf', 'pfit': 'NV', 'pk': '2'}
    """
    node = ss.get("pred_node")
    if node is None:
        return {}
    params = {"pnode": str(node), "pfit": str(ss.get("pred_model", "NV"))}
    if ss.get("pred_kind") == "Set to a value":
        params["pdo"] = _fmt(float(ss.get("pred_value", 0.0)))
    else:
        params["pk"] = _fmt(float(ss.get("pred_k", 1.0)))
    return params


def parse_predict(query, node_names) -> tuple:
    """Read the Predict page's question from query parameters, strictly (hostile input).

    Parameters
    ----------
    query : mapping of str -> str or list of str
        ``st.query_params`` (or a plain dict, in tests); the last of a repeated value counts.
    node_names : sequence of str
        The current dataset's nodes: ``pnode`` must be one of them, exactly.

    Returns
    -------
    widgets : dict
        Predict widget key -> value (``pred_node``, ``pred_model``, ``pred_kind`` with
        ``pred_value`` or ``pred_k``).
    problems : list of str
        Parameters ignored and why; no user text is echoed (only the parameter's name).

    Examples
    --------
    >>> parse_predict({"pnode": "PKA", "pdo": "2.5", "pfit": "EV"}, ["Raf", "PKA"])
    ({'pred_node': 'PKA', 'pred_model': 'EV', 'pred_kind': 'Set to a value', 'pred_value': 2.5}, [])
    >>> parse_predict({"pnode": "<b>x</b>", "pk": "99"}, ["Raf"])[1]
    ['pnode: not a node of this dataset', 'pk: outside [-10, 10]']
    """
    widgets, problems = {}, []

    def value(key):
        v = query[key]
        if isinstance(v, (list, tuple)):
            v = v[-1] if v else ""
        return str(v)

    if "pnode" in query:
        node = value("pnode")
        names = [str(n) for n in node_names]
        if len(node) <= _MAX_NODE_CHARS and node in names:
            widgets["pred_node"] = node
        else:
            problems.append("pnode: not a node of this dataset")
    if "pfit" in query:
        fit = value("pfit").strip()
        if fit in ("EV", "NV"):
            widgets["pred_model"] = fit
        else:
            problems.append("pfit: not one of EV, NV")
    for key, kind, bounds in (("pdo", "Set to a value", (-PREDICT_MAX_ABS_VALUE, PREDICT_MAX_ABS_VALUE)),
                              ("pk", "Shift by k sd", PREDICT_K_RANGE)):
        if key not in query:
            continue
        text = value(key).strip()
        x = None
        if len(text) > _MAX_VALUE_CHARS:
            problems.append(f"{key}: too long")
        else:
            x = _number(key, text, float, *bounds, problems)
        if x is not None:
            widgets.update(pred_kind=kind, **{"pred_value" if key == "pdo" else "pred_k": float(x)})
            break  # do wins over a shift when a link has both
    return widgets, problems


def restore_from_url(ss, query) -> list:
    """Apply the view a URL describes to the session, once per session (before the widgets).

    Parameters
    ----------
    ss : streamlit session state
    query : mapping
        ``st.query_params``.

    Returns
    -------
    list of (level, text)
        Messages to show: what could not be restored and why (markdown-safe, no user text).
    """
    from dashboard.infra import state

    if ss.get(state.URL_RESTORED):
        return []
    ss[state.URL_RESTORED] = True
    if not any(k in query for k in URL_KEYS):
        return []
    view = parse_view(query)
    messages = []
    try:
        dataset, note = _dataset_of(view, state.current_dataset(), ss)
    except Exception as exc:  # never a traceback from a link
        dataset, note = None, f"The link's dataset could not be made ({type(exc).__name__}); showing the current one."
    if dataset is not None:
        state.set_dataset(dataset, settings_given=True)
        if view.data == "lesson":
            from dashboard.lessons import CURRENT_LESSON

            ss[CURRENT_LESSON] = view.lesson
    if note:
        messages.append(("info", note))
    for key, value in view.widgets.items():
        ss[key] = value
    if any(k in query for k in PREDICT_KEYS):  # the Predict page's question, on the link's dataset
        widgets, problems = parse_predict(query, state.current_dataset().node_names)
        if "pred_value" in widgets and "pred_node" in widgets:  # the page resets the value of a new node
            widgets["pred_value_for"] = widgets["pred_node"]
        ss.update(widgets)
        view.problems.extend(problems)
    # the link's run settings replace the session's (a setting it leaves out takes its default); the
    # sidebar's solver radio shows the link's solver (its "auto" stands for "fast" too)
    from dashboard.infra.layout import SOLVER_LABELS

    kept = {k: v for k, v in (ss.get(state.SOLVER_OVERRIDES) or {}).items() if k not in SETTING_KEYS}
    ss[state.SOLVER_OVERRIDES] = {**kept, **{k: v for k, v in view.settings.items() if v != setting_default(k)}}
    solver = view.settings.get("solver", setting_default("solver"))
    ss["solver_choice"] = solver if solver in SOLVER_LABELS else "auto"
    if view.problems:
        messages.append(("warning", "Some settings in the link were ignored: " + "; ".join(view.problems) + "."))
    return messages


def write_url(ds, ss, query, *, predict=False) -> None:
    """Write the current view into the URL when it changed (so a refresh or a shared link restores it).

    Parameters
    ----------
    ds : dashboard.data.Dataset
    ss : streamlit session state
    query : ``st.query_params``
        Only the keys of :data:`URL_KEYS` are written or removed.
    predict : bool, default=False
        Add the Predict page's question (:func:`predict_params`).
    """
    want = view_params(ds, ss)
    if predict:
        want.update(predict_params(ss))
    have = {k: query[k] for k in URL_KEYS if k in query}
    if have == want:
        return
    for k in URL_KEYS:
        if k in query and k not in want:
            del query[k]
    query.update(want)
