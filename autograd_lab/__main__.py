"""`python -m autograd_lab ...` is the same as the `autograd-lab ...` command."""
from .cli import main

raise SystemExit(main())
