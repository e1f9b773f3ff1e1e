"""The command line (layer 8): cli.py reads the arguments and hands each command to
its module (check, call, probe, serve), imported only when that command runs."""
