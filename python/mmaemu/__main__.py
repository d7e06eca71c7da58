# SPDX-License-Identifier: BSD-2-Clause
"""python -m mmaemu info | selftest | explain: the C++ command's subcommands, options and exit
statuses (0 success; selftest 1 a kernel failed, 4 nothing could be tested; explain 1 the call
would raise, 4 unavailable; 2 usage error)."""

import sys

from . import _core


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] not in ("info", "selftest", "explain") and not args[0].startswith("-"):
        sys.stderr.write(f"mmaemu: unknown command {args[0]!r} (info, selftest or explain)\n")
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    return _core.cli(["python -m mmaemu"] + args)


if __name__ == "__main__":
    sys.exit(main())
