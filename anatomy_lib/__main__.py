"""Command line: ``python -m anatomy_lib <command> --specimen NAME --profile NAME``."""
from .cli import main

raise SystemExit(main())
