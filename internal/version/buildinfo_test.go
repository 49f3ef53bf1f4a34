package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildLines(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tlcheck/tlcheck", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-01T08:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	clean := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/tlcheck/tlcheck", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}
	cases := []struct {
		bi   *debug.BuildInfo
		ok   bool
		want []string
	}{
		{stamped, true, []string{"tlcheck " + Version, "module github.com/tlcheck/tlcheck (devel)",
			"revision 0123456789abcdef0123456789abcdef01234567 2026-12-01T08:00:00Z (modified)", "go go1.26.8"}},
		{clean, true, []string{"tlcheck " + Version, "module github.com/tlcheck/tlcheck v0.1.0", "revision abc", "go go1.26.8"}},
		{&debug.BuildInfo{GoVersion: "go1.26.8"}, true, []string{"tlcheck " + Version, "module unknown",
			"revision unknown (built without VCS stamping: go run, go test or -buildvcs=false)", "go go1.26.8"}},
		{nil, false, []string{"tlcheck " + Version, "module unknown",
			"revision unknown (built without VCS stamping: go run, go test or -buildvcs=false)"}},
	}
	for i, c := range cases {
		got := BuildFrom(c.bi, c.ok).Lines()
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("case %d:\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
