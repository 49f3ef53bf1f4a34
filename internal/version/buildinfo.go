package version

import (
	"runtime/debug"
	"strings"
)

// Build describes the binary that runs: its main module's path and
// version, and the VCS revision it was built from, as the Go toolchain
// stamped them (runtime/debug.ReadBuildInfo).
type Build struct {
	Module        string // main module path ("" when unknown)
	ModuleVersion string // "(devel)" for a build from a checkout
	Revision      string // vcs.revision ("" when not stamped)
	Time          string // vcs.time
	Modified      bool   // vcs.modified: the checkout had uncommitted changes
	GoVersion     string
}

// ReadBuild reads the running binary's build information.
func ReadBuild() Build {
	bi, ok := debug.ReadBuildInfo()
	return BuildFrom(bi, ok)
}

// BuildFrom extracts a Build from build information (ok false: none).
func BuildFrom(bi *debug.BuildInfo, ok bool) Build {
	var b Build
	if !ok || bi == nil {
		return b
	}
	b.Module, b.ModuleVersion, b.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Lines renders b for `tlcheck version`, one fact a line:
//
//	tlcheck 0.1.0
//	module github.com/tlcheck/tlcheck (devel)
//	revision 0123abcd… 2026-12-01T08:00:00Z (modified)
//	go go1.26.8
//
// An unstamped build (go run, go test, -buildvcs=false) says
// "revision unknown".
func (b Build) Lines() []string {
	lines := []string{"tlcheck " + Version}
	mod := b.Module
	if mod == "" {
		mod = "unknown"
	}
	if b.ModuleVersion != "" {
		mod += " " + b.ModuleVersion
	}
	lines = append(lines, "module "+mod)
	rev := "revision unknown (built without VCS stamping: go run, go test or -buildvcs=false)"
	if b.Revision != "" {
		parts := []string{"revision", b.Revision}
		if b.Time != "" {
			parts = append(parts, b.Time)
		}
		if b.Modified {
			parts = append(parts, "(modified)")
		}
		rev = strings.Join(parts, " ")
	}
	lines = append(lines, rev)
	if b.GoVersion != "" {
		lines = append(lines, "go "+b.GoVersion)
	}
	return lines
}
