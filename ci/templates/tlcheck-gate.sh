#!/usr/bin/env bash
# Gate YOUR repository's models and gradients with tlcheck (the GitHub
# Actions and GitLab CI templates beside this file call it).
#
#   tlcheck-gate.sh [OUT]        (default OUT: tlcheck-out)
#
# Layout it reads (change with the variables):
#   $MODELS/NAME/model.onnx, $MODELS/NAME/test_data_set_*/{input,output}_N.pb
#       tlcheck compare: every recorded output element against the exact
#       value within the a-priori float32 bound.
#   $GRADS/NAME.grads.json   (tlcheck.grads.v1, e.g. from tools/export_grads.py)
#       tlcheck compare-grad against $MODELS/NAME/model.onnx on
#       test_data_set_0's inputs.
# With CERTIFY=1 each model is also certified and verified (a model not exact
# over the rationals gets its output's interval certificate in place of the
# composition law; --partial lists a kind that cannot be written at all, such
# as a range certificate for an input beyond binary32, as "not certified"
# instead of failing the model).
#
# It writes OUT/NAME.compare.json, OUT/NAME.compare-grad.json and
# OUT/junit.xml (one test case per check). Certificates are written to
# OUT/certs.pending/ and moved to OUT/certs/ only when every check of the
# run passed and they verified; on any failure they stay in
# OUT/certs.FAILED/ and OUT/FAILED lists what failed, so no directory
# that looks verified survives a failing gate.
#
# Exit status: 0 everything holds, 1 a check failed, 2 bad input or usage.
# Time: a few seconds per small model (the commands themselves).
set -uo pipefail
TLCHECK="${TLCHECK:-tlcheck}"
MODELS="${MODELS:-models}"
GRADS="${GRADS:-grads}"
out="${1:-tlcheck-out}"
start=$(date +%s)
rm -rf "$out"
mkdir -p "$out/certs.pending" || exit 2
cases=""
failed=0
bad=0
xml() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
# check NAME CMD...: run one check, record a JUnit test case.
check() {
	local name="$1"; shift
	local log="$out/$(echo "$name" | tr '/ ' '__').log"
	"$@" >"$log.out" 2>"$log"
	local code=$?
	local esc; esc=$(printf '%s' "$name" | xml)
	case $code in
	0) cases+="<testcase classname=\"tlcheck\" name=\"$esc\"/>" ;;
	1) failed=$((failed + 1)); echo "$name" >>"$out/FAILED"
	   cases+="<testcase classname=\"tlcheck\" name=\"$esc\"><failure message=\"$(xml <"$log" | head -c 2000)\"/></testcase>" ;;
	*) bad=$((bad + 1)); echo "$name (bad input, exit $code)" >>"$out/FAILED"
	   cases+="<testcase classname=\"tlcheck\" name=\"$esc\"><error message=\"$(xml <"$log" | head -c 2000)\"/></testcase>" ;;
	esac
	echo "$name: exit $code"
	return 0
}
n=0
for m in "$MODELS"/*/model.onnx; do
	[ -e "$m" ] || continue
	dir=$(dirname "$m"); name=$(basename "$dir")
	n=$((n + 1))
	check "compare $name" "$TLCHECK" compare --json --onnx "$m" --data "$dir"
	cp "$out/compare_$name.log.out" "$out/$name.compare.json" 2>/dev/null
	if [ -f "$GRADS/$name.grads.json" ]; then
		check "compare-grad $name" "$TLCHECK" compare-grad --json --onnx "$m" --data "$dir/test_data_set_0" --grads "$GRADS/$name.grads.json"
		cp "$out/compare-grad_$name.log.out" "$out/$name.compare-grad.json" 2>/dev/null
	fi
	if [ "${CERTIFY:-0}" = 1 ]; then
		check "certify $name" "$TLCHECK" certify --partial --onnx "$m" --data "$dir/test_data_set_0" --out "$out/certs.pending/$name"
		check "verify $name" "$TLCHECK" verify "$out/certs.pending/$name"
	fi
done
if [ "$n" = 0 ]; then
	echo "tlcheck-gate: no $MODELS/*/model.onnx" >&2
	bad=1
fi
total=$(printf '%s' "$cases" | grep -o '<testcase' | wc -l)
{
	echo '<?xml version="1.0" encoding="UTF-8"?>'
	echo "<testsuites><testsuite name=\"tlcheck\" tests=\"$total\" failures=\"$failed\" errors=\"$bad\">$cases</testsuite></testsuites>"
} >"$out/junit.xml"
if [ "$failed" = 0 ] && [ "$bad" = 0 ]; then
	mv "$out/certs.pending" "$out/certs"
	echo "tlcheck-gate: passed ($total checks, $(( $(date +%s) - start )) s)"
	exit 0
fi
mv "$out/certs.pending" "$out/certs.FAILED"
echo "tlcheck-gate: FAILED: $failed failing, $bad bad input (see $out/FAILED; certificates left in $out/certs.FAILED) ($(( $(date +%s) - start )) s)" >&2
[ "$bad" != 0 ] && [ "$failed" = 0 ] && exit 2
exit 1
