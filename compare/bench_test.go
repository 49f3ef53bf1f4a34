package compare

import (
	"flag"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/limits"
)

// The model and data set BenchmarkRecordedDir judges (go test's -args).
var (
	benchONNX = flag.String("bench.onnx", "", "BenchmarkRecordedDir: the ONNX model")
	benchData = flag.String("bench.data", "", "BenchmarkRecordedDir: its recorded data set directory")
)

// BenchmarkRecordedDir is `tlcheck compare`'s work on one data set, in
// process, so that go test's -cpuprofile and -memprofile see where it
// goes (docs/performance.md, "Where compare's time goes"). It needs a
// model and data set (tools/perf/side_by_side.py builds them) and reads
// the limits from the TLCHECK_MAX_* environment, as the command does:
//
//	TLCHECK_MAX_RAT_WORK=268435456 go test ./compare -run '^$' -bench RecordedDir \
//	    -benchtime 1x -cpuprofile /tmp/cpu.out -args -bench.onnx M.onnx -bench.data DIR
func BenchmarkRecordedDir(b *testing.B) {
	if *benchONNX == "" || *benchData == "" {
		b.Skip("needs -args -bench.onnx MODEL -bench.data DIR")
	}
	l, err := limits.FromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	defer limits.Set(l)()
	for b.Loop() {
		var inputs []jsonout.Input
		if _, err := RecordedDir(*benchONNX, *benchData, fpbound.Options{}, &inputs); err != nil {
			b.Fatal(err)
		}
	}
}
