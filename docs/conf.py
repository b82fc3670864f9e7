"""Sphinx configuration of the skbandit documentation.

Build from the repository root (see the README)::

    python -m pip install -e ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The API pages (``docs/generated/``), the estimator lists of ``api.rst``
(``docs/_api_*.rst``, see ``_api_lists.py``), the gallery
(``docs/auto_examples/``, run from ``examples/``) and the ``skbandit --help``
texts (``docs/_generated/``) are written by the build; none of them is committed.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import skbandit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # _gallery_order, _api_lists

import _api_lists  # noqa: E402

# The estimator lists of api.rst (``_api_*.rst``), from the
# discovered learners: written now, before autosummary reads the sources.
_API_LISTS = _api_lists.write(HERE)

# The gallery's figures are drawn off-screen.
os.environ.setdefault("MPLBACKEND", "Agg")

project = "skbandit"
author = "skbandit developers"
copyright = "skbandit developers, BSD-3-Clause"
release = skbandit.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx_design",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# _api_*.rst are included by api.rst, not pages of their own
exclude_patterns = ["_build", "_api_*.rst"]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# -- autodoc / autosummary / numpydoc ---------------------------------------
# The sources holding autosummary lists: api.rst and the lists it includes
# (excluded as pages, so named here). A new page with an autosummary list is
# added here.
autosummary_generate = ["api.rst", *_API_LISTS]
autodoc_typehints = "none"  # the numpydoc "Parameters" sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# -- MyST: the Markdown pages of docs/ are sources as they are ---------------
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# -- sphinx-gallery ------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    # Every plot_*.py runs at build time; quickstart.py is a command-line script
    # (argparse, optional USPS file) that the README and tests/test_docs.py run.
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"quickstart\.py",
    # Named examples first (docs/_gallery_order.py), new ones after by name.
    "within_subsection_order": "_gallery_order.GalleryOrder",
    "doc_module": ("skbandit",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"skbandit": None},
    "download_all_examples": False,
    "remove_config_comments": True,
    "show_memory": False,
    "matplotlib_animations": False,
    "min_reported_time": 1,
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skbandit {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "cli": [], "choosing": []}
html_show_sourcelink = False
toc_object_entries_show_parents = "hide"  # "fit()", not "Banditron.fit()"


# -- the ``skbandit`` command: its --help texts, written at build time --------
def _write_cli_help(app) -> None:
    """Write ``skbandit --help`` and each sub-command's help for ``cli.rst``."""
    from skbandit.experiments._cli import build_parser

    out = HERE / "_generated"
    out.mkdir(exist_ok=True)
    parser = build_parser()
    texts = {"skbandit": parser.format_help()}
    for action in parser._subparsers._group_actions:  # the sub-commands
        for name, sub in action.choices.items():
            texts[f"skbandit-{name}"] = sub.format_help()
    for name, text in texts.items():
        path = out / f"{name}.txt"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


# -- inherited scikit-learn methods (score, get_params, set_*_request, ...) ---
_SKLEARN_ROLE = re.compile(
    r":(?:ref|term|class|func|meth):`(?:([^`<]*?)\s*<[^`>]*>|([^`]*))`"
)


def _plain_sklearn_roles(app, what, name, obj, options, lines) -> None:
    """Cross-references into scikit-learn's own docs become plain literals.

    The estimators inherit documented methods from scikit-learn, whose
    docstrings point at labels of scikit-learn's site (its glossary, its user
    guide); without network access at build time those cannot resolve.
    """
    module = getattr(obj, "__module__", None) or ""
    if not module.startswith("sklearn"):
        return
    for i, line in enumerate(lines):
        lines[i] = _SKLEARN_ROLE.sub(
            lambda m: f"``{(m.group(1) or m.group(2)).lstrip('~')}``", line
        )


def setup(app) -> None:
    # A fixed terminal width makes argparse wrap the help the same everywhere.
    os.environ["COLUMNS"] = "88"
    app.connect("builder-inited", _write_cli_help)
    app.connect("autodoc-process-docstring", _plain_sklearn_roles, priority=400)
