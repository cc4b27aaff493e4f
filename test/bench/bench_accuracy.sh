#!/usr/bin/env bash
# Accuracy of the core mechanisms next to the reference algorithms (issue 14):
# Gaussian accounting, quantile RMSE, mean-interval coverage and width,
# Gaussian mean calibration. Pure C++ (no PostgreSQL needed).
#   test/bench/bench_accuracy.sh [--quick]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CXX=${CXX:-g++}
"$CXX" -std=c++17 -O2 -Wall -I"$root/src/core" -o "$work/accuracy_bench" \
  "$here/accuracy_bench.cpp" "$root"/src/core/*.cpp -lssl -lcrypto -lmpfr -lgmp
"$work/accuracy_bench" "$@"
