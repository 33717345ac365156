"""dashboard.infra.assets: vis-network is copied once from the installed pyvis and served by Streamlit."""
import hashlib

from colide_core.render.graph_html import vis_assets
from dashboard.infra import assets


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_copies_the_pinned_files_and_returns_the_served_path(static_dir):
    assert assets.vis_assets_url(static_serving=True) == "app/static/vis-network-9.1.2"
    for name, source in vis_assets().items():
        assert _sha(static_dir / assets.VIS_SUBDIR / name) == _sha(source)


def test_a_tampered_or_truncated_copy_is_replaced(static_dir):
    target = static_dir / assets.VIS_SUBDIR / "vis-network.min.js"
    target.parent.mkdir(parents=True)
    target.write_text("alert('not vis-network')")
    assert assets.vis_assets_url(static_serving=True) is not None
    assert _sha(target) == _sha(vis_assets()["vis-network.min.js"])
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".tmp-")] == []


def test_inlines_when_static_serving_is_off_or_the_folder_cannot_be_written(static_dir, monkeypatch):
    assert assets.vis_assets_url(static_serving=False) is None
    assert not static_dir.exists()  # nothing written when it would not be served

    def refuse(source, target):
        raise PermissionError("read-only install")

    monkeypatch.setattr(assets, "install_file", refuse)
    assert assets.vis_assets_url(static_serving=True) is None


def test_the_project_config_serves_the_static_folder():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["enableStaticServing"] is True


def test_a_copy_removed_while_the_server_runs_is_made_again(static_dir):
    assert assets.vis_assets_url(static_serving=True) is not None
    (static_dir / assets.VIS_SUBDIR / "vis-network.css").unlink()
    assert assets.vis_assets_url(static_serving=True) is not None
    assert (static_dir / assets.VIS_SUBDIR / "vis-network.css").is_file()
