package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"sync"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
	"pgregory.net/rapid"
)

// TB is what Op reports to: *testing.T, or any rapid.TB.
type TB = rapid.TB

// Report is what a check decided, per obligation.
type Report struct {
	Op string `json:"op"`
	// Cases counts the cases run; Decided, per obligation and oracle, the
	// cases an oracle decided ("inconclusive" counts the undecided ones).
	Cases   int                       `json:"cases"`
	Decided map[string]map[string]int `json:"decided"`
	// Failure is the (shrunk) counterexample, nil when every law held on
	// every decided case.
	Failure *counterexample.Failure `json:"-"`
	// Counterexample is Failure's one-line form ("" when none).
	Counterexample string `json:"counterexample,omitempty"`
	// Certificate is the certificate directory written (CertPath), ""
	// when none was (no Options.CertDir, or the check failed).
	Certificate string `json:"-"`
	// DerivedJVP is true when the primitive gave no JVP rule and its JVP
	// was derived from the forward rule (package doc, "Two rules"): the
	// derivative obligation is then not run (it holds by construction)
	// and the VJP is judged by adjointness against the derived JVP.
	DerivedJVP bool `json:"derived_jvp,omitempty"`

	only map[obligations.Obligation]bool
}

func newReport(op string) *Report {
	r := &Report{Op: op, Decided: map[string]map[string]int{}}
	for _, ob := range Obligations {
		r.Decided[string(ob)] = map[string]int{}
	}
	return r
}

func (r *Report) add(d map[obligations.Obligation]obligations.Oracle) {
	r.Cases++
	for ob, o := range d {
		r.Decided[string(ob)][string(o)]++
	}
}

// undecided lists the obligations no oracle decided on any case.
func (r *Report) undecided() []string {
	var out []string
	for _, ob := range Obligations {
		if r.only != nil && !r.only[ob] || r.DerivedJVP && ob == obligations.Derivative {
			continue
		}
		n := 0
		for o, k := range r.Decided[string(ob)] {
			if o != string(obligations.OracleInconclusive) {
				n += k
			}
		}
		if n == 0 {
			out = append(out, string(ob))
		}
	}
	return out
}

func (r *Report) write(dir string) error {
	if dir == "" {
		return nil
	}
	if r.Failure != nil {
		r.Counterexample = r.Failure.Error()
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, r.Op+".check.json"), append(b, '\n'), 0o644)
}

// rapidSource draws through rapid, so every choice shrinks.
type rapidSource struct{ t *rapid.T }

func (s rapidSource) Intn(n int, label string) int {
	if n <= 1 {
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(s.t, label)
}

// Op checks every local obligation of the user's primitive p under rapid,
// from the user's go test: a failure fails t with the shrunk
// counterexample (the exact inputs, tangents and cotangent, the two sides
// of the law) and rapid's replay line. It also fails t when p is
// malformed, and when an obligation was decided on no case (a law checked
// on nothing does not hold). On success it logs how many cases each
// oracle decided. With opts.CertDir it writes the Report and, when every
// law held, the certificate directory CertPath(opts.CertDir, p) of the
// cases rapid drew: rapid's cases come from its own stream, which no
// seed regenerates, so the certificate records their inputs (draw
// "recorded") and Verify recomputes every claim from them.
func Op(t TB, p Primitive, opts Options) {
	t.Helper()
	c, err := newChecker(p, opts)
	if err != nil {
		t.Fatalf("%v", err)
		return
	}
	rep := newReport(p.Name)
	rep.only, rep.DerivedJVP = c.only, c.derived
	var mu sync.Mutex
	var last error
	var rec []drawn
	if opts.CertDir != "" {
		rec = []drawn{}
		c.onCase = func(d drawn) { rec = append(rec, d) } // under mu: runCase runs inside the property
	}
	rapid.Check(t, func(rt *rapid.T) {
		mu.Lock()
		defer mu.Unlock()
		d, err := c.runCase(rapidSource{rt})
		if err != nil {
			last = err
			rt.Fatalf("%s: %v", p.Name, err)
		}
		rep.add(d)
	})
	if t.Failed() {
		if last != nil {
			rep.Failure = asFailure(last, 0, -1)
		}
		if err := errors.Join(rep.write(opts.CertDir), dropCertIf(opts.CertDir, p)); err != nil {
			t.Errorf("check: %v", err)
		}
		return
	}
	u := rep.undecided()
	if len(u) > 0 {
		t.Errorf("check: %s: no case decided %v: these obligations do not hold (widen the domain or the shapes)", p.Name, u)
	}
	t.Logf("check: %s: %d cases; decided %s%s", p.Name, rep.Cases, rep.summary(), rep.derivedNote())
	if err := rep.write(opts.CertDir); err != nil {
		t.Errorf("check: %v", err)
	}
	switch {
	case opts.CertDir == "":
	case len(u) > 0:
		if err := dropCert(opts.CertDir, p); err != nil {
			t.Errorf("check: %v", err)
		}
	default:
		dir, err := c.writeCert(opts.CertDir, 0, len(rec), rec)
		if err != nil {
			t.Errorf("%v", err)
			return
		}
		rep.Certificate = dir
		t.Logf("check: %s: certificate %s (%d recorded cases; check.Verify re-derives it)", p.Name, dir, len(rec))
	}
}

// dropCertIf is dropCert when certDir is set.
func dropCertIf(certDir string, p Primitive) error {
	if certDir == "" {
		return nil
	}
	return dropCert(certDir, p)
}

// derivedNote says, for a derived JVP, what judged the VJP.
func (r *Report) derivedNote() string {
	if !r.DerivedJVP {
		return ""
	}
	return " (JVP derived from the forward rule by forward mode; the VJP is judged by adjointness against it)"
}

// summary prints the decided counts in Obligations order.
func (r *Report) summary() string {
	s := ""
	for i, ob := range Obligations {
		if i > 0 {
			s += "; "
		}
		m := r.Decided[string(ob)]
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s += string(ob)
		for _, k := range keys {
			s += fmt.Sprintf(" %s=%d", k, m[k])
		}
	}
	return s
}

// Find runs the deterministic sweep: cases 0 … opts.Cases−1, case i drawn
// from spec.CaseSeed(opts.Seed, p.Name, i). On the first failing case it
// shrinks the case's choices (shrink) and reports the smallest
// failing case found, which is a pure function of p and opts. With
// opts.CertDir it writes the Report and, when every law held, the
// certificate directory CertPath(opts.CertDir, p) of the sweep's cases,
// case i drawn from spec.CaseSeed(seed, Name, i), which Verify
// regenerates from the manifest's seed. The error is for a malformed
// primitive or a record or certificate that could not be written only.
func Find(p Primitive, opts Options) (*Report, error) {
	c, err := newChecker(p, opts)
	if err != nil {
		return nil, err
	}
	rep := newReport(p.Name)
	rep.only, rep.DerivedJVP = c.only, c.derived
	seed := opts.seed()
	for i := range opts.cases() {
		src := &streamSource{rng: casegen.NewRandSource(spec.CaseSeed(seed, p.Name, i))}
		d, err := c.runCase(src)
		if err == nil {
			rep.add(d)
			continue
		}
		buf := shrink(c, src.out, err)
		_, err = c.runCase(&streamSource{buf: buf})
		rep.Failure = asFailure(err, seed, i)
		break
	}
	if err := rep.write(opts.CertDir); err != nil || opts.CertDir == "" {
		return rep, err
	}
	if rep.Failure != nil || len(rep.undecided()) > 0 {
		return rep, dropCert(opts.CertDir, p)
	}
	dir, err := c.writeCert(opts.CertDir, seed, opts.cases(), nil)
	rep.Certificate = dir
	return rep, err
}

// choice is one recorded draw.
type choice struct {
	key string // the label, with "#n" appended for its n-th repeat in a case
	v   int
}

// streamSource records its choices by label. With rng nil it replays buf
// by label: a label buf lacks draws 0, a value beyond the draw's range is
// clamped. Keying by label rather than position keeps a shrunk choice
// from shifting the draws after it: lowering a shape extent drops the
// elements it removes and leaves every other element's draws in place.
type streamSource struct {
	rng  *casegen.RandSource
	buf  map[string]int
	out  []choice
	seen map[string]int
}

func (s *streamSource) Intn(n int, label string) int {
	if s.seen == nil {
		s.seen = map[string]int{}
	}
	key := label
	if k := s.seen[label]; k > 0 {
		key = fmt.Sprintf("%s#%d", label, k)
	}
	s.seen[label]++
	var v int
	switch {
	case n <= 1:
		return 0
	case s.rng != nil:
		v = s.rng.Intn(n, label)
	default:
		v = min(s.buf[key], n-1)
	}
	s.out = append(s.out, choice{key, v})
	return v
}

// sameFault reports whether err is the fault first found: the same
// obligation's failure, or an error that is no law's failure when the
// first was one.
func sameFault(first, err error) bool {
	if err == nil {
		return false
	}
	var a, b *counterexample.Failure
	fa, fb := errors.As(first, &a) && a.Law != "", errors.As(err, &b) && b.Law != ""
	if fa != fb {
		return false
	}
	return !fa || a.Law == b.Law
}

// shrinkBudget bounds the replays one shrink may run.
const shrinkBudget = 4000

// shrink minimises a failing case's choices: repeatedly, for each choice
// in the order drawn, it tries 0 and otherwise the smallest smaller value
// (binary search) that still fails with the same fault, keeping only the
// choices the failing replay read, until a pass changes nothing or the
// budget is spent. Every step is deterministic.
func shrink(c *checker, rec []choice, first error) map[string]int {
	cur := rec
	runs := 0
	fails := func(b []choice) ([]choice, bool) {
		runs++
		m := make(map[string]int, len(b))
		for _, ch := range b {
			m[ch.key] = ch.v
		}
		s := &streamSource{buf: m}
		_, err := c.runCase(s)
		return s.out, sameFault(first, err)
	}
	for changed := true; changed && runs < shrinkBudget; {
		changed = false
		// Move the draws of element k of every tensor to element 0, so
		// that a witness at the end of a tensor survives a smaller shape.
		for _, k := range elementIndices(cur) {
			if runs >= shrinkBudget {
				break
			}
			if nb, ok := fails(moveElement(cur, k)); ok {
				cur, changed = nb, true
			}
		}
		for i := 0; i < len(cur) && runs < shrinkBudget; i++ {
			if cur[i].v == 0 {
				continue
			}
			key := cur[i].key
			try := func(v int) bool {
				b := append([]choice(nil), cur...)
				b[i].v = v
				if nb, ok := fails(b); ok {
					cur, changed = nb, true
					return true
				}
				return false
			}
			if try(0) {
				continue
			}
			lo, hi := 0, cur[i].v // lo passes, hi fails
			for hi-lo > 1 && runs < shrinkBudget {
				mid := (lo + hi) / 2
				if try(mid) {
					hi = mid
				} else {
					lo = mid
				}
				if i >= len(cur) || cur[i].key != key {
					break // the replay read a different stream
				}
			}
		}
	}
	m := make(map[string]int, len(cur))
	for _, ch := range cur {
		m[ch.key] = ch.v
	}
	return m
}

// elemKey matches an element's label: prefix[k]suffix.
var elemKey = regexp.MustCompile(`^(.*)\[(\d+)\](.*)$`)

// elementIndices lists, in increasing order, the element indices k > 0
// that a nonzero choice's label names.
func elementIndices(cs []choice) []int {
	set := map[int]bool{}
	for _, c := range cs {
		if m := elemKey.FindStringSubmatch(c.key); m != nil && c.v != 0 {
			if k, err := strconv.Atoi(m[2]); err == nil && k > 0 {
				set[k] = true
			}
		}
	}
	out := make([]int, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// moveElement renames the choices of element k to element 0 (dropping
// element 0's own) and leaves every other choice as it is.
func moveElement(cs []choice, k int) []choice {
	out := make([]choice, 0, len(cs))
	ks := strconv.Itoa(k)
	for _, c := range cs {
		m := elemKey.FindStringSubmatch(c.key)
		switch {
		case m != nil && m[2] == "0":
			continue
		case m != nil && m[2] == ks:
			out = append(out, choice{m[1] + "[0]" + m[3], c.v})
		default:
			out = append(out, c)
		}
	}
	return out
}
