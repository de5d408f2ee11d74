#!/usr/bin/env bash
# The GPU validation and benchmark scripts only run on a GPU machine; their
# trace parsing and arithmetic are checked here on synthetic data.
set -euo pipefail
src=${NTOP_SOURCE_DIR:?}
python3 "$src/tests/gpu/check_trace.py" selftest
python3 "$src/bench/bench.py" selftest
