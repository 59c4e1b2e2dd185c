"""The file spark-submit runs: the `cdc-delta` command, from the packaged cdc_delta."""

import sys

from cdc_delta.cli import main

sys.exit(main())
