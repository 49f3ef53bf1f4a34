package lean4export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/limits"
)

// LockHeader is the first line of a statements lock file.
const LockHeader = "# tlcheck lean statements lock v1"

// LockEntry is a locked theorem: its StatementHash and DeepHash, hex.
type LockEntry struct {
	Statement string
	Deep      string
}

// Lock is a statements lock (lean/statements.lock): the Lean version the
// hashes were computed under, each locked theorem's hashes and the
// statement hash of each allowed axiom the theorems use.
//
// The file is text, one record per line, sorted, so that it diffs well
// and its bytes are a function of its content:
//
//	# tlcheck lean statements lock v1
//	lean 4.30.0
//	axiom propext <sha256>
//	theorem Tlcheck.add_adjoint <statement sha256> <deep sha256>
type Lock struct {
	Lean     string
	Theorems map[string]LockEntry
	Axioms   map[string]string
}

var (
	lockNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_']*(\.[A-Za-z_][A-Za-z0-9_']*)*$`)
	lockHashRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	lockVerRE  = regexp.MustCompile(`^[0-9A-Za-z.+\-]{1,64}$`)
)

// maxLockBytes bounds a lock file.
const maxLockBytes = 4 << 20

// ReadLock parses a lock file; file names it in errors.
func ReadLock(file string, r io.Reader) (*Lock, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxLockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(data) > maxLockBytes {
		return nil, fmt.Errorf("%s: more than %d bytes", file, maxLockBytes)
	}
	l := &Lock{Theorems: map[string]LockEntry{}, Axioms: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxLockBytes)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", file, n, fmt.Sprintf(format, args...))
		}
		if n == 1 {
			if line != LockHeader {
				return nil, bad("the first line must be %q", LockHeader)
			}
			continue
		}
		f := strings.Split(line, " ")
		switch {
		case len(f) == 2 && f[0] == "lean":
			if l.Lean != "" || !lockVerRE.MatchString(f[1]) {
				return nil, bad("a second or malformed lean version line")
			}
			l.Lean = f[1]
		case len(f) == 3 && f[0] == "axiom":
			if !lockNameRE.MatchString(f[1]) || !lockHashRE.MatchString(f[2]) {
				return nil, bad("malformed axiom line %s", limits.Quote(line))
			}
			if _, dup := l.Axioms[f[1]]; dup {
				return nil, bad("axiom %s locked twice", f[1])
			}
			l.Axioms[f[1]] = f[2]
		case len(f) == 4 && f[0] == "theorem":
			if !lockNameRE.MatchString(f[1]) || !lockHashRE.MatchString(f[2]) || !lockHashRE.MatchString(f[3]) {
				return nil, bad("malformed theorem line %s", limits.Quote(line))
			}
			if _, dup := l.Theorems[f[1]]; dup {
				return nil, bad("theorem %s locked twice", f[1])
			}
			l.Theorems[f[1]] = LockEntry{Statement: f[2], Deep: f[3]}
		default:
			return nil, bad("unknown line %s", limits.Quote(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: empty lock file", file)
	}
	if !bytes.Equal(data, l.Bytes()) {
		return nil, fmt.Errorf("%s: not in the canonical form (sorted records, one space apart, a final newline): rewrite it with tlcheck lean check --lock", file)
	}
	return l, nil
}

// TheoremNames lists the locked theorems, sorted.
func (l *Lock) TheoremNames() []string {
	out := make([]string, 0, len(l.Theorems))
	for n := range l.Theorems {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Bytes is the lock's canonical text.
func (l *Lock) Bytes() []byte {
	var b bytes.Buffer
	b.WriteString(LockHeader + "\n")
	if l.Lean != "" {
		fmt.Fprintf(&b, "lean %s\n", l.Lean)
	}
	ax := make([]string, 0, len(l.Axioms))
	for a := range l.Axioms {
		ax = append(ax, a)
	}
	sort.Strings(ax)
	for _, a := range ax {
		fmt.Fprintf(&b, "axiom %s %s\n", a, l.Axioms[a])
	}
	for _, t := range l.TheoremNames() {
		e := l.Theorems[t]
		fmt.Fprintf(&b, "theorem %s %s %s\n", t, e.Statement, e.Deep)
	}
	return b.Bytes()
}

// NewLock builds the lock of the named theorems of e. It fails unless
// every one of them is accepted by the axiom policy (a lock never pins a
// statement that is not clean) and its name is lockable.
func NewLock(e *Export, names []string) (*Lock, error) {
	l := &Lock{Lean: e.Meta.LeanVersion, Theorems: map[string]LockEntry{}, Axioms: map[string]string{}}
	if !lockVerRE.MatchString(l.Lean) {
		return nil, fmt.Errorf("the export's Lean version %s cannot be locked", limits.Quote(l.Lean))
	}
	for _, f := range Audit(e, names, nil) {
		if f.Verdict != Accepted {
			return nil, fmt.Errorf("cannot lock %s: %s", f.Theorem, strings.Join(f.Problems, "; "))
		}
		if !lockNameRE.MatchString(f.Theorem) {
			return nil, fmt.Errorf("cannot lock %s: not a plain dotted name", limits.Quote(f.Theorem))
		}
		l.Theorems[f.Theorem] = LockEntry{Statement: f.Hash, Deep: f.Deep}
		for _, a := range f.Axioms {
			d, _ := e.Lookup(a)
			if d != nil {
				l.Axioms[a] = e.StatementHash(d).Hex()
			}
		}
	}
	return l, nil
}
