"""``python -m colide_core``: the command-line interface (see :mod:`colide_core.run.cli`)."""
from colide_core.run.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
