"""python3 -m dp_audit (from test/audit): the same as test/audit/audit.py."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
