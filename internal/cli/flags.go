package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
)

// NewFlags returns a flag set that reports errors as values instead of
// printing usage text or exiting.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// HelpError is what Parse returns when the arguments ask for help (-h,
// -help, --help): not a failure — the caller prints the command's usage,
// derived from Flags by WriteUsage, and exits 0.
type HelpError struct{ Flags *flag.FlagSet }

func (e *HelpError) Error() string { return e.Flags.Name() + ": help requested" }

// Parse parses args and rejects stray positional arguments beyond
// maxPositional. A request for help is a *HelpError. Every other error is a
// UsageError that names the flag in the one style tlcheck uses (--seed,
// whichever of -seed or --seed was typed) and says why:
// "--seed: not an integer: abc", "--seed: missing value",
// "gate: unknown flag --nope (run 'tlcheck help gate')".
func Parse(fs *flag.FlagSet, args []string, maxPositional int) error {
	var setErr error
	fs.VisitAll(func(f *flag.Flag) {
		if c, ok := f.Value.(*checkedValue); ok {
			c.err = &setErr
			return
		}
		f.Value = &checkedValue{Value: f.Value, name: f.Name, err: &setErr}
	})
	if err := fs.Parse(args); err != nil {
		switch {
		case errors.Is(err, flag.ErrHelp):
			return &HelpError{Flags: fs}
		case setErr != nil:
			return &UsageError{Err: setErr}
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			return Usagef("%s: unknown flag --%s (run 'tlcheck help %s')", fs.Name(), Quote(name), fs.Name())
		}
		if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
			return Usagef("--%s: missing value", name)
		}
		if s, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
			return Usagef("%s: bad flag syntax: %s", fs.Name(), Quote(s))
		}
		return Usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > maxPositional {
		return Usagef("%s: unexpected argument %s", fs.Name(), Quoted(fs.Arg(maxPositional)))
	}
	return nil
}

// checkedValue wraps a flag's Value so that a value that does not parse
// is reported as "--NAME: why: VALUE" rather than the flag package's
// "invalid value … for flag -NAME: parse error". The first such error of
// a Parse is stored in *err.
type checkedValue struct {
	flag.Value
	name string
	err  *error
}

func (c *checkedValue) Set(s string) error {
	if err := c.Value.Set(s); err != nil {
		e := fmt.Errorf("--%s: %s: %s", c.name, why(c.Value, s, err), Quote(s))
		if *c.err == nil {
			*c.err = e
		}
		return e
	}
	return nil
}

// IsBoolFlag keeps a wrapped boolean flag usable without a value (--json).
func (c *checkedValue) IsBoolFlag() bool {
	b, ok := c.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Get returns the wrapped value's value (flag.Getter).
func (c *checkedValue) Get() any {
	if g, ok := c.Value.(flag.Getter); ok {
		return g.Get()
	}
	return c.Value.String()
}

// why says in words why s is not a value of v's type, re-parsing s with
// strconv to tell a malformed number from one out of range.
func why(v flag.Value, s string, err error) string {
	g, ok := v.(flag.Getter)
	if !ok {
		return err.Error()
	}
	// An integer in Go syntax (what the flag package accepts: sign,
	// 0x/0o/0b prefixes, underscores) that did not parse is out of range
	// or negative; anything else is not an integer.
	n, isInt := new(big.Int).SetString(s, 0)
	switch g.Get().(type) {
	case int, int64:
		if isInt {
			return "out of range"
		}
		return "not an integer"
	case uint, uint64:
		switch {
		case isInt && (n.Sign() < 0 || strings.HasPrefix(s, "-")):
			return "not an unsigned integer (must be ≥ 0)"
		case isInt && strings.HasPrefix(s, "+"):
			return "not an unsigned integer (no sign allowed)"
		case isInt:
			return "out of range"
		}
		return "not an integer"
	case float64:
		var ne *strconv.NumError
		if _, e := strconv.ParseFloat(s, 64); errors.As(e, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return "out of range"
		}
		return "not a number"
	case bool:
		return "not a boolean (want true or false)"
	case time.Duration:
		return "not a duration (such as 30s or 2m)"
	}
	return err.Error()
}

// Quote shows a user-supplied string in a one-line message: as it is when
// it is short and plain, otherwise Go-quoted and, beyond 64 bytes, cut to
// its first 40 with the full length noted — so a message never carries a
// huge or multi-line input.
func Quote(s string) string {
	plain := s != "" && len(s) <= 64
	for _, r := range s {
		if !plain || unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(prefix(s))
}

// Quoted is s Go-quoted, cut like Quote: for a message that always
// quotes (unknown command "frob").
func Quoted(s string) string { return strconv.Quote(prefix(s)) }

// prefix cuts s to its first 40 bytes (on a rune boundary) when it is
// longer than 64, noting the full length.
func prefix(s string) string {
	if len(s) <= 64 {
		return s
	}
	n := 40
	for n > 0 && !utfStart(s[n]) {
		n--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:n], len(s))
}

func utfStart(b byte) bool { return b&0xC0 != 0x80 }

// List splits a comma-separated flag value into its elements, trimming
// spaces. An empty value, or an empty element ("a,,b"), is an error naming
// the flag: an empty --ops never silently means "all".
func List(flagName, v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, Usagef("--%s: empty value (give a comma-separated list)", flagName)
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, Usagef("--%s: empty element %d in %s", flagName, i, Quote(v))
		}
	}
	return parts, nil
}

// Count renders n with its noun in the right number: "1 failure",
// "2 failures", "0 failures".
func Count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}

// WriteUsage writes a command's usage, derived from its flag set so that
// no flag can be left out: the synopsis, the summary, then one line per
// flag, sorted by name — "--NAME TYPE", its one-line description and its
// default ("none" for an empty string; a required flag, see Required,
// shows none). A description may name the value
// in backquotes ("write the certificates to `DIR`"), as flag.UnquoteUsage
// reads it.
func WriteUsage(w io.Writer, synopsis, summary string, fs *flag.FlagSet) error {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s\n", synopsis, summary)
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	b.WriteString("\nflags:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, f := range flags {
		inner := *f
		if c, ok := f.Value.(*checkedValue); ok {
			inner.Value = c.Value // UnquoteUsage names the type by the concrete Value
		}
		name, usage := flag.UnquoteUsage(&inner)
		left := "  --" + f.Name
		if name != "" {
			left += " " + name
		}
		if Required(f) {
			fmt.Fprintf(tw, "%s\t%s\n", left, usage)
		} else {
			fmt.Fprintf(tw, "%s\t%s (default: %s)\n", left, usage, DefaultText(f))
		}
	}
	fmt.Fprintf(tw, "  -h, --help\tprint this help and exit 0\n")
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// Required reports whether f is a required flag: its description ends in
// "(required)" and it has no default.
func Required(f *flag.Flag) bool {
	return f.DefValue == "" && strings.HasSuffix(f.Usage, "(required)")
}

// DefaultText is how WriteUsage shows a flag's default: as the flag
// prints it, "none" for an empty string, and a string Go-quoted only when
// it could be misread (spaces, control characters, the word none).
func DefaultText(f *flag.Flag) string {
	v := any(f.DefValue)
	if g, ok := f.Value.(flag.Getter); ok {
		v = g.Get()
	}
	if _, isString := v.(string); isString {
		if f.DefValue == "" {
			return "none"
		}
		if f.DefValue == "none" {
			return `"none"`
		}
		return Quote(f.DefValue)
	}
	return f.DefValue
}

// Agree picks the verb form that agrees with a count: Agree(1, "fails",
// "fail") is "fails", for "1 of 12 obligations fails".
func Agree(n int, singular, plural string) string {
	if n == 1 {
		return singular
	}
	return plural
}
