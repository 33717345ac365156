"""``colide app``: open the dashboard, from a checkout or from the installed wheel.

The app is ``app.py`` and ``pages/``. In a checkout they sit at the repository's root (``make run``
is ``streamlit run app.py``); the wheel installs the same files as the folder ``colide_app/`` next
to ``colide_core/`` (``pyproject.toml`` maps the package ``colide_app`` onto the root). Streamlit
resolves the pages that ``app.py`` hands to ``st.navigation`` (``"pages/learn.py"``, from
``dashboard.infra.nav.PAGES``) against the folder of the script it runs, so the one layout works in both
places, and ``static/`` is served from that folder too (``dashboard.infra.assets``).

:func:`app_command` is ``python -P -m streamlit run <app.py>`` with the app's Streamlit settings
(``.streamlit/config.toml`` next to ``app.py``, which Streamlit itself would read only from the
current directory) given as options, the server bound to ``localhost``, then the user's own
options, which come last and so win (``colide app --server.port 8502``). :func:`run` replaces this
process by Streamlit's (``os.execv``; a child process where there is no ``exec``).

``-P`` (Python >= 3.11, "safe path"): ``python -m`` would otherwise put the current directory
first on ``sys.path``, so a ``streamlit.py`` (or ``numpy.py``, ...) in the folder the user starts
``colide app`` from would run in place of the real package (issue 53). ``-I`` would also drop
``PYTHONPATH`` and the user's site-packages, where the app may be installed, so it is not used.

Streamlit is never imported here (the library never imports it): the command runs it as a
program, after checking that it is installed (:class:`~colide_core.exceptions.MissingExtraError`
otherwise, which the CLI prints as one line naming the ``[dashboard]`` extra).
"""
from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

__all__ = ["add_parser", "app_command", "app_script", "run", "streamlit_options"]

#: Folder holding ``colide_core/``: the repository's root in a checkout, ``site-packages`` installed.
_BASE = Path(__file__).resolve().parents[2]

#: Options given before the app's settings and the user's: a local tool listens on this machine only
#: (as ``make run``); ``colide app --server.address 0.0.0.0`` overrides it.
DEFAULT_OPTIONS = ("--server.address=localhost",)

#: The interpreter's options: ``-P``, no current directory (nor script folder) on ``sys.path``.
SAFE_PATH = ("-P",)


def app_script() -> Path:
    """The dashboard's ``app.py``: the installed ``colide_app/app.py``, else the checkout's.

    Returns
    -------
    Path
        An absolute path; ``pages/`` is in the same folder.

    Raises
    ------
    FileNotFoundError
        If neither exists (an installation without the app, which the wheel always ships).
    """
    for folder in (_BASE / "colide_app", _BASE):
        script = folder / "app.py"
        if script.is_file() and (folder / "pages").is_dir():
            return script
    raise FileNotFoundError(f"the dashboard's app.py is not installed next to {_BASE / 'colide_core'}")


def streamlit_options(config) -> list[str]:
    """A Streamlit ``config.toml`` as ``streamlit run`` options.

    Parameters
    ----------
    config : str or Path
        The TOML file (``[section]`` tables of ``option = value``); a missing file gives no option.

    Returns
    -------
    list of str
        ``["--section.option=value", ...]`` in file order; booleans written ``true``/``false``.

    Raises
    ------
    tomllib.TOMLDecodeError
        If the file is not TOML.
    """
    path = Path(config)
    if not path.is_file():
        return []
    options = []
    for section, table in tomllib.loads(path.read_text(encoding="utf-8")).items():
        for name, value in table.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            options.append(f"--{section}.{name}={text}")
    return options


def app_command(streamlit_args=()) -> list[str]:
    """The command that serves the dashboard: ``python -P -m streamlit run app.py [options]``.

    Parameters
    ----------
    streamlit_args : sequence of str, default ()
        Options for ``streamlit run`` (``--server.port 8502``, ``--server.headless true``); they come
        after the app's own settings, so they override them.

    Returns
    -------
    list of str
        The argument vector, starting with this interpreter (``sys.executable``) and ``-P``, which
        keeps the current directory off ``sys.path``: nothing in it can stand in for a module.
    """
    script = app_script()
    return [sys.executable, *SAFE_PATH, "-m", "streamlit", "run", str(script), *DEFAULT_OPTIONS,
            *streamlit_options(script.parent / ".streamlit" / "config.toml"), *map(str, streamlit_args)]


def add_parser(sub):
    """Register ``app`` on the CLI's sub-command parsers (``colide_core.run.cli.build_parser``).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The CLI's sub-parsers. Options this parser does not know are Streamlit's: the CLI passes
        them on (:func:`run`).
    """
    a = sub.add_parser("app", help="open the dashboard on Sachs (needs the [dashboard] extra)", allow_abbrev=False,
                       description="Serve the dashboard with `streamlit run` of the installed app. Other "
                                   "options go to `streamlit run`, after the app's own settings, e.g. "
                                   "--server.port 8502 --server.headless true.")
    a.add_argument("--dry-run", action="store_true",
                   help="print the streamlit command and exit (checks that the app and streamlit are installed)")


def run(args, streamlit_args=(), echo=None) -> int:
    """Serve the dashboard (the CLI's ``app`` command).

    Parameters
    ----------
    args : argparse.Namespace
        With ``dry_run``.
    streamlit_args : sequence of str, default ()
        Passed on to ``streamlit run`` (:func:`app_command`).
    echo : callable, optional
        ``echo(text)``: where ``--dry-run`` writes the command (the CLI's writer); required then.

    Returns
    -------
    int
        0 after ``--dry-run``; otherwise Streamlit's exit status where this process cannot be
        replaced by Streamlit's (on POSIX :func:`os.execv` does not return).

    Raises
    ------
    MissingExtraError
        If streamlit is not installed (the ``[dashboard]`` extra).
    """
    if importlib.util.find_spec("streamlit") is None:
        from colide_core.exceptions import MissingExtraError

        raise MissingExtraError("streamlit", "the dashboard")
    command = app_command(streamlit_args)
    if args.dry_run:
        if echo is None:
            raise ValueError("--dry-run needs echo= to say the command")
        echo(shlex.join(command))
        return 0
    sys.stdout.flush()
    if os.name == "posix":
        os.execv(command[0], command)
    return subprocess.call(command)  # pragma: no cover - Windows
