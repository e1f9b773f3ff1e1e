"""python -m rypsok, and the zipapp's entry."""

import sys

from rypsok.commands.cli import main

sys.exit(main())
