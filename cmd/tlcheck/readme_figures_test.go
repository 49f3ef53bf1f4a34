package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestReadmeGateFigures: the first screen of README.md states how many
// items each gate stage has — check (obligations), refine (provider × op
// pairs and declared-order checks), certify and verify (certificate
// files). They are generated figures: this runs the gate on its defaults
// and fails when the README's numbers differ from the stages' item counts
// (a new primitive or provider changes them; update the README then).
func TestReadmeGateFigures(t *testing.T) {
	skipUnlessExhaustive(t, "runs the gate on its defaults; ci/stage-workflows.sh runs it")
	if testing.Short() {
		t.Skip("short: runs the gate")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	want := map[string]*regexp.Regexp{
		"check":   regexp.MustCompile(`in ` + "`check`" + `, one obligation of one\s+primitive or one graph-level obligation \((\d+)\)`),
		"refine":  regexp.MustCompile(`in ` + "`refine`" + `, one provider × op pair or declared-order\s+check \((\d+)\)`),
		"certify": regexp.MustCompile(`in ` + "`certify`" + ` and ` + "`verify`" + `, one certificate file \((\d+)\)`),
	}
	stated := map[string]int{}
	for stage, re := range want {
		m := re.FindStringSubmatch(readme)
		if m == nil {
			t.Fatalf("README.md states no item count for %s (%s)", stage, re)
		}
		stated[stage], _ = strconv.Atoi(m[1])
	}
	stated["verify"] = stated["certify"]
	// The other places that count the default suite's files.
	files := stated["certify"]
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile("`verify: 1 of (\\d+) files fails` for a reordered manifest: the manifest and the (\\d+) files it lists"),
		regexp.MustCompile(`with (\d+) files in the default suite`),
	} {
		m := re.FindStringSubmatch(readme)
		if m == nil {
			t.Errorf("README.md no longer says %s", re)
			continue
		}
		got, _ := strconv.Atoi(m[len(m)-1])
		if got != files || len(m) == 3 && m[1] != strconv.Itoa(files+1) {
			t.Errorf("README.md: %q, but the default suite has %d files (the first screen's certify count)", m[0], files)
		}
	}
	code, out, errs := runCmd("gate", "--json", "--out", filepath.Join(t.TempDir(), "certs"))
	if code != 0 {
		t.Fatalf("gate: exit %d %s", code, errs)
	}
	var doc struct {
		Stages []struct {
			Stage string            `json:"stage"`
			Items []json.RawMessage `json:"items"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, s := range doc.Stages {
		n, ok := stated[s.Stage]
		if !ok {
			continue
		}
		seen++
		if len(s.Items) != n {
			t.Errorf("README.md says the %s stage has %d items; the gate ran %d", s.Stage, n, len(s.Items))
		}
	}
	if seen != len(stated) {
		t.Errorf("the gate reported %d of the %d stages the README counts", seen, len(stated))
	}
}
