"""pyproject.toml lists the packages instead of finding them (the app's scripts at the root install
as ``colide_app``): a new package of the tree must be added there, or the wheel silently lacks
it. Read from the sources, no build (``tests/test_wheel.py`` builds and installs the wheel).
"""
import tomllib

from dashboard.infra.nav import PAGES


def test_every_package_of_the_tree_and_the_app_are_in_the_wheel(repo_root):
    setup = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]["setuptools"]
    tree = {".".join(p.parent.relative_to(repo_root).parts)
            for top in ("colide_core", "dashboard") for p in (repo_root / top).rglob("__init__.py")}
    assert {"colide_core", "colide_core.solver", "dashboard"} <= tree  # the tree really was read
    assert set(setup["packages"]) == tree | {"colide_app", "colide_app.pages"}
    assert setup["package-dir"] == {"colide_app": "."}  # colide_app/app.py is the root's app.py


def test_the_installed_app_has_its_pages_and_settings_where_it_looks_for_them(repo_root):
    # app.py hands st.navigation the PAGES paths, which Streamlit resolves against app.py's folder:
    # the root here, colide_app/ once installed (pages/ -> colide_app.pages)
    for path, _title, _icon in PAGES:
        assert path.startswith("pages/") and (repo_root / path).is_file(), path
    data = tomllib.loads((repo_root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert data["colide_app"] == [".streamlit/config.toml"]
    assert (repo_root / ".streamlit" / "config.toml").is_file()
