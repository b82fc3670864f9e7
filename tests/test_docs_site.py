"""The documentation site: API reference complete, pages reachable, links whole.

The fast tests read the Sphinx sources (``docs/``, ``examples/``) and need no
Sphinx. The link check reads a built site: ``docs/_build/html`` (or the folder
named by ``SKBANDIT_DOCS_HTML``) when it exists, as after the README's docs
command (CI builds it, then runs this file again); ``--runslow`` also builds the
site without the gallery into a temporary folder and checks that.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import skbandit

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api.rst"


def api_text() -> str:
    """``docs/api.rst`` as Sphinx reads it: the generated estimator lists
    (``docs/_api_lists.py``) in place of their includes."""
    sys.path.insert(0, str(DOCS))
    try:
        import _api_lists
    finally:
        sys.path.remove(str(DOCS))
    return _api_lists.expand(API.read_text())


# --------------------------------------------------------------------------
# the API reference lists every public name
# --------------------------------------------------------------------------
def public_modules() -> list[str]:
    """``skbandit`` and every sub-module without a leading underscore."""
    names = ["skbandit"]
    for info in pkgutil.walk_packages(skbandit.__path__, "skbandit."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def public_names() -> list[tuple[str, str]]:
    """(module, name) for every name in a public module's ``__all__``."""
    pairs = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            if not (name.startswith("__") and name.endswith("__")):
                pairs.append((module_name, name))
    return pairs


def api_entries(text: str) -> list[tuple[str, str]]:
    """(current module, name) of each entry of each ``autosummary`` list."""
    entries, module, listing = [], None, False
    for line in text.splitlines():
        match = re.match(r"\.\. currentmodule:: (\S+)\s*$", line)
        if match:
            module, listing = match.group(1), False
        elif line.startswith(".. autosummary::"):
            listing = True
        elif listing and line.strip() and not line.startswith("   :"):
            if line.startswith("   "):
                entries.append((module, line.strip()))
            else:
                listing = False
    return entries


def _resolve(module: str, name: str):
    return getattr(importlib.import_module(module), name)


def missing_api_lines(text: str) -> list[str]:
    """What docs/api.rst lacks: one instruction per missing public name."""
    documented = [(name, _resolve(m, name)) for m, name in api_entries(text)]
    required = public_names()
    missing = []
    for module, name in required:
        obj = _resolve(module, name)
        if any(n == name and o is obj for n, o in documented):
            continue
        # The shortest public path of the same object is where it belongs.
        home = min(
            (m for m, n in required if n == name and _resolve(m, n) is obj),
            key=lambda m: (m.count("."), m),
        )
        line = f"add the line '   {name}' to an autosummary list under "
        line += f"'.. currentmodule:: {home}' in docs/api.rst"
        if f".. currentmodule:: {home}\n" not in text:
            line += " (a new section: copy the 'Evaluation' one for that module)"
        if line not in missing:
            missing.append(line)
    return missing


def test_public_modules_declare_all():
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        assert hasattr(module, "__all__"), f"{module_name} has no __all__"


def test_api_reference_lists_every_public_name():
    missing = missing_api_lines(api_text())
    assert not missing, "\n".join(missing)


def test_api_reference_check_sees_a_missing_name():
    # The check itself: dropping one estimator's line is reported, with the
    # line to add and where.
    text = api_text()
    assert "\n   Banditron\n" in text
    missing = missing_api_lines(text.replace("\n   Banditron\n", "\n"))
    assert missing == [
        "add the line '   Banditron' to an autosummary list under "
        "'.. currentmodule:: skbandit' in docs/api.rst"
    ]


def test_api_reference_entries_exist():
    # A renamed or removed name must leave the reference too.
    for module, name in api_entries(api_text()):
        assert module is not None, f"{name} is listed before any currentmodule"
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


# --------------------------------------------------------------------------
# pages, the command's help, the gallery
# --------------------------------------------------------------------------
def _toctree_entries(path: Path) -> set[str]:
    entries, inside = set(), False
    for line in path.read_text().splitlines():
        if line.startswith(".. toctree::"):
            inside = True
        elif inside and line.startswith("   ") and not line.strip().startswith(":"):
            entries.add(line.strip())
        elif inside and line.strip() and not line.startswith("   "):
            inside = False
    return entries


def test_every_page_is_in_a_toctree():
    listed = set()
    for rst in DOCS.glob("*.rst"):
        listed |= {
            (rst.parent / e).relative_to(DOCS).as_posix() for e in _toctree_entries(rst)
        }
    pages = {
        p.relative_to(DOCS).with_suffix("").as_posix()
        for p in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")]
    }
    generated = {"sg_execution_times"}  # sphinx-gallery's, not committed
    # the estimator lists that api.rst includes (docs/_api_lists.py)
    generated |= {p.stem for p in DOCS.glob("_api_*.rst")}
    orphans = sorted(pages - listed - generated - {"index"})
    assert not orphans, (
        f"pages in no toctree: {orphans}; add each to docs/user_guide.rst "
        "(user-guide pages) or docs/index.rst"
    )


def test_home_page_example_runs(capsys):
    text = (DOCS / "index.rst").read_text()
    (block,) = re.findall(r".. code-block:: python\n\n((?:   .*\n|\n)+)", text)
    exec(compile(textwrap.dedent(block), "index.rst", "exec"), {})
    error = float(re.search(r"online error: ([0-9.]+)", capsys.readouterr().out)[1])
    assert 0.0 < error < 0.9  # below uniform guessing over 10 digits


def test_cli_page_shows_every_subcommand():
    from skbandit.experiments._cli import build_parser

    parser = build_parser()
    (subparsers,) = parser._subparsers._group_actions
    text = (DOCS / "cli.rst").read_text()
    for name in ["skbandit", *(f"skbandit-{c}" for c in subparsers.choices)]:
        assert f".. literalinclude:: _generated/{name}.txt" in text, name


def test_gallery_examples_draw_figures():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 5
    assert (ROOT / "examples" / "README.txt").exists()
    for path in examples:
        source = path.read_text()
        # sphinx-gallery: a docstring that opens with a reST title.
        match = re.match(r'r?"""\n(?:(=+)\n)?(.+)\n(=+)\n', source)
        assert match, f"{path.name}: docstring must open with a === title ==="
        over, title, under = match.groups()
        assert len(over or title) >= len(title) <= len(under), path.name
        assert "import matplotlib" in source, f"{path.name} draws no figure"


# --------------------------------------------------------------------------
# the built site has no broken internal links
# --------------------------------------------------------------------------
class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and tag in ("a", "img", "link", "script", "source"):
                self.links.append(attrs[key])


def broken_internal_links(html_dir: Path) -> list[str]:
    """Every relative link of every page whose file or anchor is missing."""
    parsed: dict[Path, _Links] = {}

    def parse(path: Path) -> _Links:
        if path not in parsed:
            parser = _Links()
            parser.feed(path.read_text(encoding="utf-8", errors="replace"))
            parsed[path] = parser
        return parsed[path]

    broken = []
    for page in sorted(html_dir.rglob("*.html")):
        if page.relative_to(html_dir).parts[0] in ("_static", "_sources"):
            continue  # the theme's templates, copied as they are
        for link in parse(page).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("#", "mailto:")):
                if link.startswith("#") and len(link) > 1:
                    if unquote(link[1:]) not in parse(page).ids:
                        broken.append(f"{page.relative_to(html_dir)}: {link}")
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(html_dir)}: {link}")
            elif parts.fragment and target.suffix == ".html":
                if unquote(parts.fragment) not in parse(target).ids:
                    broken.append(f"{page.relative_to(html_dir)}: {link}")
    return broken


def test_link_check_finds_broken_links(tmp_path):
    (tmp_path / "a.html").write_text(
        '<h1 id="top">A</h1><a href="b.html#here">ok</a><a href="b.html#gone">x</a>'
        '<a href="missing.html">x</a><a href="#top">ok</a><a href="#nope">x</a>'
        '<img src="_images/f.png"><a href="https://example.org/x.html">ext</a>'
    )
    (tmp_path / "b.html").write_text('<p id="here">B</p>')
    assert broken_internal_links(tmp_path) == [
        "a.html: b.html#gone",
        "a.html: missing.html",
        "a.html: #nope",
        "a.html: _images/f.png",
    ]


def test_built_html_has_no_broken_internal_links():
    html_dir = Path(os.environ.get("SKBANDIT_DOCS_HTML", DOCS / "_build" / "html"))
    if not (html_dir / "index.html").exists():
        pytest.skip(f"no built site at {html_dir} (see the README's docs command)")
    broken = broken_internal_links(html_dir)
    assert not broken, "\n".join(broken[:50])
    assert (html_dir / "api.html").exists()


@pytest.mark.slow
def test_docs_build_without_gallery_has_no_warnings_nor_broken_links(tmp_path):
    pytest.importorskip("sphinx")
    out = tmp_path / "html"
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    cmd += ["-D", "plot_gallery=0", "-d", str(tmp_path / "dt")]
    proc = subprocess.run(
        [*cmd, str(DOCS), str(out)], capture_output=True, text=True, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert not broken_internal_links(out)
