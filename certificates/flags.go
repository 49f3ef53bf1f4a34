package certificates

import (
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
)

// ParseProviders validates a --providers value against Providers: nil
// for "all", else the named providers; an unknown name is a usage error.
func ParseProviders(v string) ([]string, error) {
	known := Providers()
	if v == "all" {
		return nil, nil
	}
	list, err := cli.List("providers", v)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range list {
		ok := false
		for _, k := range known {
			ok = ok || k == p
		}
		if !ok {
			return nil, cli.Usagef("--providers: unknown provider %q (known: %s)", p, strings.Join(known, ","))
		}
		out = append(out, p)
	}
	return out, nil
}
