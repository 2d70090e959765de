"""``python -m codegen.apidiff OLD NEW``: same as ``python -m codegen diff``."""

import sys

from .cli import main

sys.exit(main())
