package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStatsFlag checks --stats on eval, grad and compare: with --json it
// adds a stats object whose peak RSS is a plausible byte count (above the
// Go runtime's own few MiB, below the 5 GiB the tests may use), the
// document still matches its schema, and removing the stats object gives
// back, byte for byte, the document printed without --stats (which has no
// stats key); without --json it is a usage error (exit 2).
func TestStatsFlag(t *testing.T) {
	quad, qin := examplePath("quad.ir.json"), examplePath("quad.input.json")
	mlp := irExamples[2].args("")[1:]
	om, od := onnxFixture(t)
	cases := []struct {
		kind string
		args []string
		code int
	}{
		{"eval", []string{"eval", "--graph", quad, "--input", qin, "--all"}, 0},
		{"grad", append([]string{"grad"}, mlp...), 0},
		{"compare", []string{"compare", "--onnx", om, "--data", od}, 0},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			code, plain, errs := runCmd(append(c.args, "--json")...)
			if code != c.code {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if strings.Contains(plain, `"stats"`) {
				t.Fatalf("stats without --stats:\n%s", plain)
			}
			code, withStats, errs := runCmd(append(c.args, "--json", "--stats")...)
			if code != c.code {
				t.Fatalf("exit %d with --stats: %s", code, errs)
			}
			if err := compiled(t, c.kind).Validate([]byte(withStats)); err != nil {
				t.Fatalf("does not match schemas/%s.vN.json: %v\n%s", c.kind, err, withStats)
			}
			var doc map[string]json.RawMessage
			if err := json.Unmarshal([]byte(withStats), &doc); err != nil {
				t.Fatal(err)
			}
			var st struct {
				PeakRSSBytes int64 `json:"peak_rss_bytes"`
			}
			if err := json.Unmarshal(doc["stats"], &st); err != nil {
				t.Fatalf("stats %s: %v", doc["stats"], err)
			}
			if st.PeakRSSBytes < 4<<20 || st.PeakRSSBytes > 5<<30 {
				t.Errorf("peak_rss_bytes = %d, not a plausible resident set size", st.PeakRSSBytes)
			}
			// The stats object is the document's last field: cutting it
			// must give the plain document back exactly.
			k := strings.LastIndex(withStats, `"stats":`)
			if k < 0 {
				t.Fatalf("no stats field in %s", withStats)
			}
			end := k + strings.Index(withStats[k:], "}") + 1
			start := strings.LastIndex(withStats[:k], ",")
			if got := withStats[:start] + withStats[end:]; got != plain {
				t.Errorf("without its stats the document differs:\n%s\nwant\n%s", got, plain)
			}
			code, _, errs = runCmd(append(c.args, "--stats")...)
			if code != 2 || !strings.Contains(errs, "--stats needs --json") {
				t.Errorf("--stats without --json: exit %d, %q", code, errs)
			}
		})
	}
}
