"""``python -m atmsim`` is the same as the ``atmsim`` command."""
from atmsim.cli import main

main()
