#!/usr/bin/python3
"""Black-box privacy audit of dp_agg, through SQL only: the entry point run by
run_audit.sh. The audit itself is the package dp_audit next to this file (see
its __init__.py for the method and the layout)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dp_audit import ExtensionConstantError  # noqa: E402 (after the path is set)

try:
    from dp_audit.cli import main  # noqa: E402
except ExtensionConstantError as error:
    print(f"audit: cannot run: {error}", file=sys.stderr)
    sys.exit(2)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
