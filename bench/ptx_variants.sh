#!/bin/bash
# What block_sched costs inside app_cost's fill, copy and reduce kernels,
# variant by variant (bench/ptx_variants.py says which): on the GPU machine,
# from the repository root, in one device call (about a minute). Needs
# build-gpu (ntop and bench/ptx_time, carried) and nvcc.
#
#   bench/ptx_variants.sh        writes $OUT/ptx_variants.txt (default OUT ./gpu-out)
#                                (the variants' PTX stays in a /tmp directory)
#
# Each kernel's variants run side by side in one process (bench/ptx_time.c:
# 7 rounds of 41 launches each, alternating, median of the round medians;
# "call": the host time of the driver's launch call alone, its median);
# the `block` variant's records are checked first (one per block). Prints
# a table of us per launch and the ratio to the original kernel.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d /tmp/ptx_variants.XXXXXX) # the PTX files: only the table goes to OUT
NTOP=${NTOP:-build-gpu/bin/ntop}
TIME=${PTX_TIME:-build-gpu/bench/ptx_time}
export PATH=$PATH:/usr/local/cuda/bin
# PTX_VARIANTS: a subset to time (orig first), default every variant
VARIANTS=${PTX_VARIANTS:-"orig emitted general onestore lanes nosmid entry16 nostore nomem noglobal noclock noread idx1d idx1dm nomemp nomemclk lateclk block w0 pack8 pack16 pad32 full32 samesm v4 v4base blkred blkred2 p8w0 blockmap blkred2e l2hint l2wb"}
declare -A ENTRY=([fill]=_Z6k_fillPiii [copy]=_Z6k_copyPKfPfi [reduce]=_Z8k_reducePKfPyi)

python3 bench/ptx_variants.py make --ntop "$NTOP" --out "$W" >/dev/null || exit 1
if [ ! -x "$TIME" ]; then
	TIME=$W/ptx_time
	cc -O2 -o "$TIME" bench/ptx_time.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda || exit 1
fi
rc=0
for k in fill copy reduce; do
	files=()
	for v in $VARIANTS; do files+=("$W/$k.$v.ptx"); done
	check=()
	case " $VARIANTS " in *" block "*) check=(--check-blocks "$W/$k.block.ptx") ;; esac
	"$TIME" "${check[@]}" "$k" "${ENTRY[$k]}" "${files[@]}" >"$W/$k.txt" 2>&1 || rc=1
done
{
	echo "# block_sched variants in the kernel (bench/ptx_variants.sh) $(date -u +%FT%TZ)"
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
	echo
	printf '| variant |'
	for k in fill copy reduce; do printf ' %s us |' "$k"; done
	echo
	printf '|---|---|---|---|\n'
	for v in $VARIANTS; do
		printf '| %s |' "$v"
		for k in fill copy reduce; do
			us=$(sed -nE "s|^variant .*/$k\.$v\.ptx median_us=([0-9.]+).*|\1|p" "$W/$k.txt")
			base=$(sed -nE "s|^variant .*/$k\.orig\.ptx median_us=([0-9.]+).*|\1|p" "$W/$k.txt")
			call=$(sed -nE "s|^variant .*/$k\.$v\.ptx .*call_ns=([0-9]+).*|\1|p" "$W/$k.txt")
			if [ -n "$us" ] && [ -n "$base" ]; then
				printf ' %s (%sx, call %s ns) |' "$us" "$(awk -v a="$us" -v b="$base" 'BEGIN { printf "%.3f", a / b }')" "$call"
			else
				printf ' failed |'
			fi
		done
		echo
	done
	echo
	grep -h "^check " "$W"/*.txt
	for k in fill copy reduce; do grep -v "^variant \|^check " "$W/$k.txt" | sed "s/^/$k: /"; done
} | tee "$OUT/ptx_variants.txt"
exit $rc
