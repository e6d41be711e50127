"""offline/debian_mirror.py: the archive apt already uses, never a host written into the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import load_module

mirror = load_module("debian_mirror", "offline/debian_mirror.py")


def apt_dir(tmp_path: Path, *, sources_list: str = "", **parts: str) -> Path:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list").write_text(sources_list)
    for name, text in parts.items():
        (tmp_path / "sources.list.d" / name.replace("_", ".")).write_text(text)
    return tmp_path


DEB822 = """\
Types: deb
# a comment between fields
URIs: http://security.mirror.test/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://archive.mirror.test/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def test_deb822_takes_the_plain_suite_not_security(tmp_path):
    found = mirror.mirrors(apt_dir(tmp_path, debian_sources=DEB822))
    assert found == ["http://archive.mirror.test/debian"]


def test_one_line_format_with_options(tmp_path):
    text = (
        "deb [arch=amd64 signed-by=/k.gpg] http://local.test/debian-security bookworm-security main\n"
        "# deb http://commented.test/debian bookworm main\n"
        "deb-src http://src.test/debian bookworm main\n"
        "deb [trusted=yes] http://local.test/debian/ bookworm main non-free\n"
    )
    assert mirror.mirrors(apt_dir(tmp_path, sources_list=text)) == ["http://local.test/debian"]


def test_disabled_stanzas_and_other_components_are_skipped(tmp_path):
    text = (
        "Types: deb\nURIs: http://off.test/debian\nSuites: bookworm\nComponents: main\n"
        "Enabled: no\n\n"
        "Types: deb\nURIs: http://node.test/node\nSuites: nodistro\nComponents: contrib\n"
    )
    assert mirror.mirrors(apt_dir(tmp_path, a_sources=text)) == []


def test_sources_list_comes_before_the_parts(tmp_path):
    found = mirror.mirrors(
        apt_dir(
            tmp_path,
            sources_list="deb http://first.test/debian bookworm main\n",
            debian_sources=DEB822,
        )
    )
    assert found[0] == "http://first.test/debian"


def test_no_archive_is_a_clear_error(tmp_path, capsys):
    assert mirror.main(["--sources-dir", str(apt_dir(tmp_path))]) == 1
    assert "no Debian archive" in capsys.readouterr().err


def test_prints_the_first_archive(tmp_path, capsys):
    assert mirror.main(["--sources-dir", str(apt_dir(tmp_path, debian_sources=DEB822))]) == 0
    assert capsys.readouterr().out.strip() == "http://archive.mirror.test/debian"


@pytest.mark.parametrize("path", [".ci/run", "offline/build-images.sh"])
def test_no_mirror_host_is_written_into_the_scripts(path):
    text = (Path(__file__).resolve().parents[2] / path).read_text()
    assert "debian_mirror.py" in text
    assert "http://" not in text.replace("http://$", "")
