"""`python -m cdc_delta …` is the `cdc-delta` command."""

import sys

from .cli import main

sys.exit(main())
