package backend

import (
	"fmt"
	"io"
	"sync"

	"github.com/tlcheck/tlcheck/spec"
)

// Banner is the line each eager session prints, under --show-backend,
// before the report lines of the capsules it selects.
const Banner = "[tlcheck] backend capsules used:"

// Report is the --show-backend record of the capsules selected so far. It
// may be shared by several sessions (one per eager run or step): each
// session writes the Banner when it starts, and a capsule's report lines
// are written only the first time any session sharing the report selects
// it, so a later session's banner may stand alone. Output is deterministic:
// it follows the order of selection. Report is safe for concurrent use;
// the zero value records without writing.
type Report struct {
	mu   sync.Mutex
	w    io.Writer
	seen map[string]bool
	used []Capsule
}

// NewReport returns a report writing to w (nil: record without writing).
func NewReport(w io.Writer) *Report {
	if w == nil {
		w = io.Discard
	}
	return &Report{w: w, seen: map[string]bool{}}
}

// Begin writes the banner line.
func (r *Report) Begin() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return nil
	}
	_, err := fmt.Fprintln(r.w, Banner)
	return err
}

// Record notes that c was selected and, the first time a capsule of that
// name is recorded, writes its report lines.
func (r *Report) Record(c Capsule) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[c.Name] {
		return nil
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[c.Name] = true
	r.used = append(r.used, c)
	if r.w == nil {
		return nil
	}
	_, err := io.WriteString(r.w, c.Report())
	return err
}

// Used lists the recorded capsules in order of first selection.
func (r *Report) Used() []Capsule {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Capsule(nil), r.used...)
}

// WriteReport writes the banner followed by the report lines of caps, in
// order (for example the capsules of a kernel plan).
func WriteReport(w io.Writer, caps []Capsule) error {
	if _, err := fmt.Fprintln(w, Banner); err != nil {
		return err
	}
	for _, c := range caps {
		if _, err := io.WriteString(w, c.Report()); err != nil {
			return err
		}
	}
	return nil
}

// Session is the backend side of one eager session: before an eager
// operation executes, Select resolves its capsule on the session's profile
// and binds it to a runtime handler, caching the result per op. A Session
// is not safe for concurrent use (an eager session is sequential); the
// Report it writes to may be shared.
type Session struct {
	profile   *Profile
	providers *Providers
	report    *Report
	bound     map[string]*Binding
	order     []string
}

// NewSession starts a session selecting on profile p and binding through
// providers (nil: DefaultProviders). When report is non-nil the session
// writes the Banner to it now and records every selection in it.
func NewSession(p *Profile, providers *Providers, report *Report) (*Session, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if providers == nil {
		providers = DefaultProviders()
	}
	if err := report.Begin(); err != nil {
		return nil, fmt.Errorf("backend: writing the capsule report: %w", err)
	}
	return &Session{profile: p, providers: providers, report: report, bound: map[string]*Binding{}}, nil
}

// NewDeviceSession starts a session on the maintained profile of device
// (see ProfileFor and NewSession). A device without a profile yields a
// *NoProfileError before anything is written to report.
func NewDeviceSession(device string, providers *Providers, report *Report) (*Session, error) {
	p, err := ProfileFor(device)
	if err != nil {
		return nil, err
	}
	return NewSession(p, providers, report)
}

// Profile is the session's profile.
func (s *Session) Profile() *Profile { return s.profile }

// Select selects the capsule for op on the session's profile and binds it,
// once per op: later calls return at once. The first selection of a
// capsule is recorded in the session's report. It fails with a
// *NoCapsuleError when no capsule is admissible, and with a
// *MissingProviderError or *MissingHandlerError when the selected capsule
// cannot be bound; nothing is cached then.
func (s *Session) Select(op string) error {
	_, err := s.Binding(op)
	return err
}

// Binding selects (if not yet done) and returns the binding for op. If
// only writing the report fails, the binding is cached and returned with
// the write error.
func (s *Session) Binding(op string) (*Binding, error) {
	if s == nil || s.profile == nil {
		return nil, fmt.Errorf("backend: no session")
	}
	if b, ok := s.bound[op]; ok {
		return b, nil
	}
	sel, err := s.profile.Select(op)
	if err != nil {
		return nil, err
	}
	b, err := s.providers.Bind(sel.Capsule)
	if err != nil {
		return nil, err
	}
	s.bound[op] = b
	s.order = append(s.order, op)
	if err := s.report.Record(b.Capsule); err != nil {
		return b, fmt.Errorf("backend: writing the capsule report: %w", err)
	}
	return b, nil
}

// Execute selects the capsule for op and runs its forward value on xs.
func (s *Session) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	b, err := s.Binding(op)
	if err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	return b.Execute(a, xs)
}

// Selected lists the capsules this session selected, in order of first
// selection.
func (s *Session) Selected() []Capsule {
	if s == nil {
		return nil
	}
	out := make([]Capsule, len(s.order))
	for i, op := range s.order {
		out[i] = s.bound[op].Capsule
	}
	return out
}
