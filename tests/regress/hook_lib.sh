# Shared setup for the hook_*.sh regress scripts (sourced by them).
B=${NTOP_BINARY_DIR:?}
S=${NTOP_SOURCE_DIR:?}
APP=$B/tests/fakecuda/app_launch
FAKE=$B/tests/fakecuda/driver/libcuda.so.1
HOOKDIR=$B/lib/ntop
DUMP=$B/tests/fakecuda/ntr_dump
PTX=$S/tests/fakecuda/kernels.ptx
[ -x "$APP" ] && [ -f "$FAKE" ] && [ -f "$HOOKDIR/libcuda.so.1" ] || { echo "hook test binaries not built"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect FILE REGEX WHAT
expect() { grep -Eq -- "$2" "$1" || fail "$3 (no line matching '$2' in $(basename "$1"))"; }
