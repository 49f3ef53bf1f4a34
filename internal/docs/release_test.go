package docs

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/version"
)

// TestInstallable keeps both modules installable with `go install
// …@vX.Y.Z` once tagged (issue 28 point 9): go install refuses a module
// whose go.mod has a replace directive, so adapters/go.mod has none and
// requires the main module at the version this build states
// (internal/version, what `tlcheck version` prints and the tag is named
// after); a checkout builds the adapters against its own main module
// through adapters/go.work, whose replace go install ignores. The
// README's release steps name the same tags. A planted replace in the
// text of go.mod is caught.
func TestInstallable(t *testing.T) {
	tag := "v" + version.Version
	mod := read(t, "adapters/go.mod")
	if err := noReplace(mod, tag); err != nil {
		t.Error(err)
	}
	if err := noReplace(mod+"\nreplace github.com/tlcheck/tlcheck => ../\n", tag); err == nil {
		t.Error("a replace directive in adapters/go.mod was not caught")
	}
	work := read(t, "adapters/go.work")
	if !regexp.MustCompile(`(?m)^use \.$`).MatchString(work) || !regexp.MustCompile(`(?m)^replace github\.com/tlcheck/tlcheck => \.\./$`).MatchString(work) {
		t.Errorf("adapters/go.work does not use the adapters module and replace the main module by the checkout:\n%s", work)
	}
	if m := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(read(t, "go.mod")); m == nil || m[1]+"/" != module {
		t.Errorf("go.mod declares module %v, want %s", m, strings.TrimSuffix(module, "/"))
	}
	readme := read(t, "README.md")
	for _, want := range []string{
		"git tag -a " + tag + " ",
		"git tag -a adapters/" + tag + " ",
		"go install github.com/tlcheck/tlcheck/cmd/tlcheck@" + tag,
		"go install github.com/tlcheck/tlcheck/adapters/cmd/tlcheck-adapters@" + tag,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md's release steps lack %q", want)
		}
	}
}

// noReplace checks a go.mod's text: no replace directive (a line or a
// block), and a requirement of the main module at tag.
func noReplace(mod, tag string) error {
	if regexp.MustCompile(`(?m)^\s*replace\b`).MatchString(mod) {
		return fmt.Errorf("adapters/go.mod has a replace directive: go install …@%s refuses such a module", tag)
	}
	if !regexp.MustCompile(`(?m)^\s*(require\s+)?github\.com/tlcheck/tlcheck ` + regexp.QuoteMeta(tag) + `\s*$`).MatchString(mod) {
		return fmt.Errorf("adapters/go.mod does not require github.com/tlcheck/tlcheck %s (internal/version's version)", tag)
	}
	return nil
}
