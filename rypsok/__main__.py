"""python -m rypsok, and the zipapp's entry."""

import sys

from rypsok.cli import main

sys.exit(main())
