"""``python -m skbandit.experiments``: the ``skbandit`` command."""

import sys

from skbandit.experiments._cli import main

if __name__ == "__main__":
    sys.exit(main())
