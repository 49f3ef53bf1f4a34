package obligations

import (
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/spec"
)

// ParseOps resolves an --ops value against the primitive registry: every
// primitive for "all", nil for "none", else the named primitives once each
// in the order given; an unknown name is a usage error.
func ParseOps(v string) ([]string, error) {
	all := make([]string, 0)
	for _, info := range spec.Infos() {
		all = append(all, info.Name)
	}
	if v == "all" {
		return all, nil
	}
	if v == "none" {
		return nil, nil
	}
	names, err := cli.List("ops", v)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range names {
		if _, err := spec.Info(name); err != nil {
			return nil, cli.Usagef("--ops: unknown primitive %q (known: %s)", name, strings.Join(all, ","))
		}
		if !seen[name] {
			out = append(out, name)
			seen[name] = true
		}
	}
	return out, nil
}
