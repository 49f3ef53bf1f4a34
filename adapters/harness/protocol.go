package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tlcheck/tlcheck/spec"
)

// ProtocolVersion is the version string of the engine protocol that
// NewProtocol speaks (docs/engines.md, schemas/engine.v1.json). An engine
// whose handshake names another version is refused with an error that
// says both.
const ProtocolVersion = "tlcheck.engine.v1"

// The formats a protocol machine computes in.
const (
	Float64 = "float64"
	Float32 = "float32"
)

// ProtocolOptions configures a protocol engine's child process.
type ProtocolOptions struct {
	// Dir is the child's working directory ("" the harness's).
	Dir string
	// Env is added to the harness's environment for the child.
	Env []string
	// CaseTimeout bounds one answer (and the handshake); an engine that
	// does not answer in time is killed, the case is a run finding and
	// the next case starts a fresh child. Default 120 s.
	CaseTimeout time.Duration
	// StartTimeout bounds the start and handshake of a child (default
	// 60 s: an engine that imports PyTorch takes seconds).
	StartTimeout time.Duration
	// MemoryBytes bounds the child's resident set (Linux: VmRSS of
	// /proc/PID/status, polled every 20 ms while a case runs); over it
	// the child is killed as for a timeout. 0: 8 GiB.
	MemoryBytes int64
}

// Protocol is an engine reached through the tlcheck.engine.v1 protocol:
// a child process that reads one JSON object per line on its stdin and
// answers one per line on its stdout. It implements Engine (and
// JVPEngine and Formatted): the harness runs it exactly as it runs a Go
// adapter. Close ends the child.
type Protocol struct {
	argv  []string
	o     ProtocolOptions
	hello wireHello
	convs []Convention
	ops   map[string]bool

	mu     sync.Mutex
	child  *child
	nextID int
}

// child is one running engine process.
type child struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	done   chan struct{} // closed when stdout ends
	rerr   error         // why stdout ended (after done)
	stderr *tail
}

// tail keeps the last 2000 bytes written to it (the child's stderr, for
// the error of a crash).
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2000 {
		t.b = append([]byte(nil), t.b[len(t.b)-2000:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = strings.TrimSpace(s[i+1:]) // the last line: Python's exception
	}
	return s
}

// The wire format (schemas/engine.v1.json).
type (
	wireRequest struct {
		Type       string       `json:"type"`
		Protocol   string       `json:"protocol,omitempty"`
		ID         int          `json:"id,omitempty"`
		Machine    string       `json:"machine,omitempty"`
		Format     string       `json:"format,omitempty"`
		Transforms []string     `json:"transforms,omitempty"`
		Graph      *wireGraph   `json:"graph,omitempty"`
		Inputs     []wireTensor `json:"inputs,omitempty"`
		Cotangent  *wireTensor  `json:"cotangent,omitempty"`
		Tangents   []wireTensor `json:"tangents,omitempty"`
		Limits     *wireLimits  `json:"limits,omitempty"`
	}
	wireLimits struct {
		Seconds     float64 `json:"seconds"`
		MemoryBytes int64   `json:"memory_bytes"`
	}
	wireGraph struct {
		Inputs int        `json:"inputs"`
		Nodes  []wireNode `json:"nodes"`
	}
	wireNode struct {
		Op    string         `json:"op"`
		Attrs map[string]any `json:"attrs,omitempty"`
		Args  []int          `json:"args"`
		// InheritAttrs, in a convention's graph only: the node takes the
		// replaced node's attributes.
		InheritAttrs bool `json:"inherit_attrs,omitempty"`
	}
	wireTensor struct {
		Shape []int    `json:"shape"`
		Data  []string `json:"data"`
	}
	wireHello struct {
		Type        string           `json:"type"`
		Protocol    string           `json:"protocol"`
		Engine      string           `json:"engine"`
		Version     string           `json:"version"`
		Machines    []wireMachine    `json:"machines"`
		Ops         []string         `json:"ops"`
		Conventions []wireConvention `json:"conventions"`
	}
	wireMachine struct {
		Name   string `json:"name"`
		Format string `json:"format"`
		// Transforms the machine runs: "forward" and any of "vjp",
		// "jvp" (all three when absent).
		Transforms []string `json:"transforms,omitempty"`
	}
	wireConvention struct {
		Op     string     `json:"op"`
		Doc    string     `json:"doc"`
		Source string     `json:"source"`
		Graph  *wireGraph `json:"graph,omitempty"`
		// Builtin names a harness convention whose graph depends on
		// shapes: "max_pool_first" (MaxPoolFirst), "clamp_inclusive"
		// (ClampInclusive), "clamp_half" (ClampHalf).
		Builtin string `json:"builtin,omitempty"`
	}
	wireAnswer struct {
		Type   string       `json:"type"`
		ID     int          `json:"id"`
		Y      *wireTensor  `json:"y,omitempty"`
		Grads  []wireTensor `json:"grads,omitempty"`
		JVP    *wireTensor  `json:"jvp,omitempty"`
		Kind   string       `json:"kind,omitempty"`
		Reason string       `json:"reason,omitempty"`
	}
)

// NewProtocol starts the engine argv[0] with arguments argv[1:] and
// performs the handshake: it sends {"type":"hello","protocol":…} and
// expects the engine's hello with its name, version, machines, mapped
// primitives and conventions. A version mismatch, a malformed or late
// answer, or an engine that exits is an error naming the command.
func NewProtocol(argv []string, o ProtocolOptions) (*Protocol, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("engine command: empty")
	}
	if o.CaseTimeout <= 0 {
		o.CaseTimeout = 120 * time.Second
	}
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = 8 << 30
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	p := &Protocol{argv: argv, o: o}
	if err := p.start(); err != nil {
		return nil, fmt.Errorf("engine %s: %w", strings.Join(argv, " "), err)
	}
	if err := p.checkHello(); err != nil {
		p.Close()
		return nil, fmt.Errorf("engine %s: handshake: %w", strings.Join(argv, " "), err)
	}
	return p, nil
}

func (p *Protocol) start() error {
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Dir = p.o.Dir
	cmd.Env = append(os.Environ(), p.o.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	c := &child{cmd: cmd, in: in, lines: make(chan []byte, 1), done: make(chan struct{}), stderr: &tail{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 256<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		c.rerr = sc.Err()
		close(c.done)
	}()
	p.child = c
	var h wireHello
	line, err := p.exchange(wireRequest{Type: "hello", Protocol: ProtocolVersion}, p.o.StartTimeout)
	if err != nil {
		return err
	}
	if err := strictJSON(line, &h); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if p.hello.Engine != "" {
		// A restart: the engine must introduce itself as before.
		if h.Engine != p.hello.Engine || h.Version != p.hello.Version || h.Protocol != p.hello.Protocol {
			return fmt.Errorf("restarted engine says %s %s, was %s %s", h.Engine, h.Version, p.hello.Engine, p.hello.Version)
		}
		return nil
	}
	p.hello = h
	return nil
}

func (p *Protocol) checkHello() error {
	h := p.hello
	if h.Type != "hello" {
		return fmt.Errorf("first answer has type %q, want \"hello\"", h.Type)
	}
	if h.Protocol != ProtocolVersion {
		return fmt.Errorf("the engine speaks protocol %q, this harness %q", h.Protocol, ProtocolVersion)
	}
	if h.Engine == "" || strings.ContainsAny(h.Engine, ", \t\n") {
		return fmt.Errorf("engine name %q: want a non-empty word", h.Engine)
	}
	if len(h.Machines) == 0 {
		return errors.New("no machines")
	}
	seen := map[string]bool{}
	for i, m := range h.Machines {
		if m.Name == "" || seen[m.Name] {
			return fmt.Errorf("machines[%d]: name %q empty or repeated", i, m.Name)
		}
		seen[m.Name] = true
		if m.Format != Float64 && m.Format != Float32 {
			return fmt.Errorf("machines[%d] (%s): format %q is neither float64 nor float32", i, m.Name, m.Format)
		}
		if m.Transforms == nil {
			h.Machines[i].Transforms = []string{"forward", "vjp", "jvp"}
			p.hello.Machines[i].Transforms = h.Machines[i].Transforms
		}
		fwd := false
		for _, t := range h.Machines[i].Transforms {
			switch t {
			case "forward":
				fwd = true
			case "vjp", "jvp":
			default:
				return fmt.Errorf("machines[%d] (%s): transform %q is none of forward, vjp, jvp", i, m.Name, t)
			}
		}
		if !fwd {
			return fmt.Errorf("machines[%d] (%s): transforms %v lack forward", i, m.Name, m.Transforms)
		}
	}
	reg := spec.Default[spec.Rat]()
	p.ops = map[string]bool{}
	for i, op := range h.Ops {
		if _, err := reg.Lookup(op); err != nil {
			return fmt.Errorf("ops[%d]: %q is no registry primitive", i, op)
		}
		p.ops[op] = true
	}
	for i, c := range h.Conventions {
		conv, err := c.convention()
		if err != nil {
			return fmt.Errorf("conventions[%d] (%s): %w", i, c.Op, err)
		}
		p.convs = append(p.convs, conv)
	}
	return nil
}

// convention turns a declared convention into the harness's.
func (c wireConvention) convention() (Convention, error) {
	if _, err := spec.Default[spec.Rat]().Lookup(c.Op); err != nil {
		return Convention{}, err
	}
	switch {
	case c.Builtin == "max_pool_first" && c.Graph == nil:
		conv := MaxPoolFirst(c.Source)
		conv.Op = c.Op
		if c.Doc != "" {
			conv.Doc = c.Doc
		}
		return conv, nil
	case c.Builtin == "clamp_inclusive" && c.Graph == nil && c.Op == "clamp":
		return ClampInclusive(c.Source), nil
	case c.Builtin == "clamp_half" && c.Graph == nil && c.Op == "clamp":
		return ClampHalf(c.Source), nil
	case c.Builtin != "":
		return Convention{}, fmt.Errorf("unknown builtin %q for %s (known: max_pool_first, clamp_inclusive and clamp_half for clamp)", c.Builtin, c.Op)
	case c.Graph == nil:
		return Convention{}, errors.New("neither graph nor builtin")
	}
	wg := *c.Graph
	if _, err := wg.graph(nil); err != nil {
		return Convention{}, err
	}
	return Convention{Op: c.Op, Doc: c.Doc, Source: c.Source, Expand: func(a *spec.Attrs) Graph {
		g, _ := wg.graph(a)
		return g
	}}, nil
}

// graph decodes a wire graph; inherit is the attributes that nodes
// marked inherit_attrs take.
func (w wireGraph) graph(inherit *spec.Attrs) (Graph, error) {
	g := Graph{Inputs: w.Inputs}
	for j, n := range w.Nodes {
		a, err := decodeAttrs(n.Attrs)
		if err != nil {
			return Graph{}, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		if n.InheritAttrs && inherit != nil {
			a = inherit.Clone()
		}
		g.Nodes = append(g.Nodes, Node{Op: n.Op, Attrs: a, Args: append([]int(nil), n.Args...)})
	}
	if w.Inputs < 1 {
		return Graph{}, fmt.Errorf("inputs %d", w.Inputs)
	}
	return g, g.Check()
}

// Close ends the engine's child process.
func (p *Protocol) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kill()
	return nil
}

func (p *Protocol) kill() {
	c := p.child
	if c == nil {
		return
	}
	p.child = nil
	c.in.Close()
	if c.cmd.Process != nil {
		// The child may exit by itself on EOF; the group is killed so
		// that no worker it started outlives it.
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
		}
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		c.cmd.Wait()
	}
}

// exchange sends one request and returns the answer line, within
// timeout and the memory limit; on a timeout, an exceeded limit or an
// exit the child is killed (the next request starts a new one).
func (p *Protocol) exchange(req wireRequest, timeout time.Duration) ([]byte, error) {
	c := p.child
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		p.kill()
		return nil, fmt.Errorf("writing to the engine: %v%s", err, stderrNote(c))
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line := <-c.lines:
			return line, nil
		case <-c.done:
			select {
			case line := <-c.lines:
				return line, nil
			default:
			}
			c.cmd.Wait()
			p.kill()
			why := "closed its stdout"
			if c.cmd.ProcessState != nil {
				why = "exited (" + c.cmd.ProcessState.String() + ")"
			}
			return nil, fmt.Errorf("the engine %s%s", why, stderrNote(c))
		case <-timer.C:
			p.kill()
			return nil, fmt.Errorf("the engine did not answer within %v: killed", timeout)
		case <-tick.C:
			if rss := residentBytes(c.cmd.Process.Pid); rss > p.o.MemoryBytes {
				p.kill()
				return nil, fmt.Errorf("the engine's resident memory %d bytes passed the limit %d: killed", rss, p.o.MemoryBytes)
			}
		}
	}
}

func stderrNote(c *child) string {
	if s := c.stderr.String(); s != "" {
		return ": " + s
	}
	return ""
}

// residentBytes is the process's VmRSS (0 where /proc does not say).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

// strictJSON decodes one JSON value with no unknown field and nothing
// after it.
func strictJSON(line []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value on a line")
	}
	return nil
}

// Name is the engine's name from its handshake.
func (p *Protocol) Name() string { return p.hello.Engine }

// Module is the engine's version line from its handshake.
func (p *Protocol) Module() string {
	return fmt.Sprintf("%s %s (%s)", p.hello.Engine, p.hello.Version, ProtocolVersion)
}

// Machines are the handshake's machines.
func (p *Protocol) Machines() []string {
	var ms []string
	for _, m := range p.hello.Machines {
		ms = append(ms, m.Name)
	}
	return ms
}

// Format is the format machine m computes in (Formatted).
func (p *Protocol) Format(m string) string {
	for _, x := range p.hello.Machines {
		if x.Name == m {
			return x.Format
		}
	}
	return Float64
}

// Can reports whether machine m runs transform t (Capable).
func (p *Protocol) Can(m, t string) bool {
	for _, x := range p.hello.Machines {
		if x.Name == m {
			for _, y := range x.Transforms {
				if y == t {
					return true
				}
			}
		}
	}
	return false
}

// Ops lists the primitives the handshake maps, sorted.
func (p *Protocol) Ops() []string {
	var ops []string
	for op := range p.ops {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// Supports says whether the handshake lists op; attributes and shapes
// the engine cannot express come back as an "unsupported" refusal.
func (p *Protocol) Supports(op string, _ *spec.Attrs) error {
	if !p.ops[op] {
		return errors.New("not mapped by the engine")
	}
	return nil
}

// Conventions are the handshake's conventions.
func (p *Protocol) Conventions() []Convention { return p.convs }

// Run sends the case (transforms forward and vjp) to machine m; to a
// machine that runs only the forward, transform forward, and the
// gradients are nil.
func (p *Protocol) Run(m string, g Graph, xs []Tensor64, cot Tensor64) (Tensor64, []Tensor64, error) {
	a, err := p.call(m, g, xs, &cot, nil)
	if err != nil {
		return Tensor64{}, nil, err
	}
	if !p.Can(m, "vjp") {
		if a.Y == nil {
			return Tensor64{}, nil, errors.New("protocol: the answer has no y")
		}
		y, err := a.Y.tensor("y")
		return y, nil, err
	}
	if a.Y == nil || len(a.Grads) != len(xs) {
		return Tensor64{}, nil, fmt.Errorf("protocol: the answer has %s and %d gradients for %d inputs", presence(a.Y != nil, "y"), len(a.Grads), len(xs))
	}
	y, err := a.Y.tensor("y")
	if err != nil {
		return Tensor64{}, nil, err
	}
	grads := make([]Tensor64, len(a.Grads))
	for i := range a.Grads {
		if grads[i], err = a.Grads[i].tensor(fmt.Sprintf("grads[%d]", i)); err != nil {
			return Tensor64{}, nil, err
		}
		if !sameShape(grads[i].Shape, xs[i].Shape) {
			return Tensor64{}, nil, fmt.Errorf("protocol: grads[%d] has shape %v, input %v", i, grads[i].Shape, xs[i].Shape)
		}
	}
	return y, grads, nil
}

// RunJVP sends the case with transforms forward and jvp (JVPEngine).
func (p *Protocol) RunJVP(m string, g Graph, xs, tangents []Tensor64) (Tensor64, Tensor64, error) {
	a, err := p.call(m, g, xs, nil, tangents)
	if err != nil {
		return Tensor64{}, Tensor64{}, err
	}
	if a.Y == nil || a.JVP == nil {
		return Tensor64{}, Tensor64{}, fmt.Errorf("protocol: the answer has %s and %s", presence(a.Y != nil, "y"), presence(a.JVP != nil, "jvp"))
	}
	y, err := a.Y.tensor("y")
	if err != nil {
		return Tensor64{}, Tensor64{}, err
	}
	jv, err := a.JVP.tensor("jvp")
	if err != nil {
		return Tensor64{}, Tensor64{}, err
	}
	if !sameShape(jv.Shape, y.Shape) {
		return Tensor64{}, Tensor64{}, fmt.Errorf("protocol: jvp has shape %v, y %v", jv.Shape, y.Shape)
	}
	return y, jv, nil
}

func presence(ok bool, what string) string {
	if ok {
		return what
	}
	return "no " + what
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// call sends one case and returns the engine's result; a refusal of kind
// "unsupported" is ErrUnsupported, any other refusal, a malformed answer,
// a timeout or a crash an error.
func (p *Protocol) call(m string, g Graph, xs []Tensor64, cot *Tensor64, tangents []Tensor64) (*wireAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	format := p.Format(m)
	req := wireRequest{Type: "case", Machine: m, Format: format, Graph: encodeGraph(g),
		Limits: &wireLimits{Seconds: p.o.CaseTimeout.Seconds(), MemoryBytes: p.o.MemoryBytes}}
	all := append([]Tensor64(nil), xs...)
	for _, x := range xs {
		req.Inputs = append(req.Inputs, encodeTensor(x))
	}
	switch {
	case cot != nil && !p.Can(m, "vjp"):
		req.Transforms = []string{"forward"}
	case cot != nil:
		req.Transforms = []string{"forward", "vjp"}
		t := encodeTensor(*cot)
		req.Cotangent = &t
		all = append(all, *cot)
	default:
		req.Transforms = []string{"forward", "jvp"}
		for _, t := range tangents {
			req.Tangents = append(req.Tangents, encodeTensor(t))
		}
		all = append(all, tangents...)
	}
	for _, t := range all {
		for k, v := range t.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, Unsupportedf("element %d value %v is not finite", k, v)
			}
		}
	}
	if format == Float32 {
		for _, t := range all {
			for k, v := range t.Data {
				if float64(float32(v)) != v {
					return nil, Unsupportedf("element %d value %v is not a binary32 number (machine %s computes in float32)", k, v, m)
				}
			}
		}
	}
	if p.child == nil {
		if err := p.start(); err != nil {
			return nil, fmt.Errorf("restarting the engine: %w", err)
		}
	}
	p.nextID++
	req.ID = p.nextID
	line, err := p.exchange(req, p.o.CaseTimeout)
	if err != nil {
		return nil, err
	}
	var a wireAnswer
	if err := strictJSON(line, &a); err != nil {
		p.kill() // out of step: start afresh
		return nil, fmt.Errorf("protocol: malformed answer: %v", err)
	}
	if a.ID != req.ID {
		p.kill()
		return nil, fmt.Errorf("protocol: answer id %d to case id %d", a.ID, req.ID)
	}
	switch a.Type {
	case "result":
		return &a, nil
	case "refusal":
		switch a.Kind {
		case "unsupported":
			return nil, Unsupportedf("%s", a.Reason)
		case "error":
			return nil, fmt.Errorf("%s", a.Reason)
		}
		return nil, fmt.Errorf("protocol: refusal kind %q (want unsupported or error): %s", a.Kind, a.Reason)
	}
	return nil, fmt.Errorf("protocol: answer type %q (want result or refusal)", a.Type)
}

func encodeGraph(g Graph) *wireGraph {
	w := &wireGraph{Inputs: g.Inputs, Nodes: []wireNode{}}
	for _, n := range g.Nodes {
		w.Nodes = append(w.Nodes, wireNode{Op: n.Op, Attrs: encodeAttrs(n.Attrs), Args: append([]int{}, n.Args...)})
	}
	return w
}

// encodeTensor writes each value exactly, as the reduced fraction "p/q"
// (or "p") of the binary64 number: the cases' values are dyadics, which
// an engine converts to its format without rounding.
func encodeTensor(t Tensor64) wireTensor {
	w := wireTensor{Shape: append([]int{}, t.Shape...), Data: make([]string, len(t.Data))}
	for i, v := range t.Data {
		w.Data[i] = new(big.Rat).SetFloat64(v).RatString()
	}
	return w
}

// tensor decodes a wire tensor of values: decimal or hexadecimal
// floating-point literals, "nan", "inf", "-inf".
func (w wireTensor) tensor(what string) (Tensor64, error) {
	n := 1
	for _, d := range w.Shape {
		if d < 0 {
			return Tensor64{}, fmt.Errorf("protocol: %s: negative extent in shape %v", what, w.Shape)
		}
		// The product is compared with len(Data), which fits in an int:
		// one past it is enough to refuse, and never overflows.
		if d != 0 && n > (len(w.Data)+1)/d+1 {
			n = len(w.Data) + 1
			continue
		}
		n *= d
		if n > len(w.Data) {
			n = len(w.Data) + 1
		}
	}
	if n != len(w.Data) {
		return Tensor64{}, fmt.Errorf("protocol: %s: shape %v holds %d elements, data has %d", what, w.Shape, n, len(w.Data))
	}
	t := Tensor64{Shape: append([]int{}, w.Shape...), Data: make([]float64, len(w.Data))}
	for i, s := range w.Data {
		v, err := parseFloat(s)
		if err != nil {
			return Tensor64{}, fmt.Errorf("protocol: %s: element %d: %v", what, i, err)
		}
		t.Data[i] = v
	}
	return t, nil
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "nan":
		return math.NaN(), nil
	case "inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	if s == "" || strings.ContainsAny(s, "nNiI_") || strings.HasPrefix(s, "+") {
		return 0, fmt.Errorf("%q is not a float literal (decimal, hexadecimal, nan, inf, -inf)", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a float literal: %v", s, err)
	}
	return v, nil
}

// encodeAttrs writes the attributes a primitive reads, by snake_case
// name, leaving zero values out; rationals are exact strings "p/q".
func encodeAttrs(a *spec.Attrs) map[string]any {
	if a == nil {
		return nil
	}
	m := map[string]any{}
	rat := func(k string, r *big.Rat) {
		if r != nil {
			m[k] = r.RatString()
		}
	}
	ints := func(k string, v []int) {
		if v != nil {
			m[k] = append([]int{}, v...)
		}
	}
	if a.Axis != 0 {
		m["axis"] = a.Axis
	}
	if a.Axis2 != 0 {
		m["axis2"] = a.Axis2
	}
	ints("shape", a.Shape)
	ints("perm", a.Perm)
	if a.Start != 0 {
		m["start"] = a.Start
	}
	if a.End != 0 {
		m["end"] = a.End
	}
	rat("c", a.C)
	rat("lo", a.Lo)
	rat("hi", a.Hi)
	rat("eps", a.Eps)
	rat("p", a.P)
	if a.Seed != 0 {
		m["seed"] = strconv.FormatUint(a.Seed, 10)
	}
	if a.Values != nil {
		vs := make([]string, len(a.Values))
		for i, v := range a.Values {
			vs[i] = v.RatString()
		}
		m["values"] = vs
	}
	if w := a.Window; w != nil {
		wm := map[string]any{"kernel": append([]int{}, w.Kernel...), "stride": append([]int{}, w.Stride...)}
		if w.Pads != nil {
			wm["pads"] = append([]int{}, w.Pads...)
		}
		if w.Dilation != nil {
			wm["dilation"] = append([]int{}, w.Dilation...)
		}
		if w.OutputPadding != nil {
			wm["output_padding"] = append([]int{}, w.OutputPadding...)
		}
		if w.Groups != 0 {
			wm["groups"] = w.Groups
		}
		if w.CeilMode {
			wm["ceil_mode"] = true
		}
		if w.CountIncludePad {
			wm["count_include_pad"] = true
		}
		m["window"] = wm
	}
	ints("widths", a.Widths)
	if a.Mode != "" {
		m["mode"] = a.Mode
	}
	rat("value", a.Value)
	ints("indices", a.Indices)
	ints("indices_shape", a.IndicesShape)
	if a.Size != 0 {
		m["size"] = a.Size
	}
	rat("alpha", a.Alpha)
	rat("beta", a.Beta)
	rat("bias", a.Bias)
	rat("lambd", a.Lambd)
	if a.Mask != nil {
		m["mask"] = append([]bool{}, a.Mask...)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// decodeAttrs reads what encodeAttrs writes (a convention graph's
// attributes), refusing unknown keys.
func decodeAttrs(m map[string]any) (*spec.Attrs, error) {
	if m == nil {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var w struct {
		Axis   int      `json:"axis"`
		Axis2  int      `json:"axis2"`
		Shape  []int    `json:"shape"`
		Perm   []int    `json:"perm"`
		Start  int      `json:"start"`
		End    int      `json:"end"`
		C      string   `json:"c"`
		Lo     string   `json:"lo"`
		Hi     string   `json:"hi"`
		Eps    string   `json:"eps"`
		Lambd  string   `json:"lambd"`
		Values []string `json:"values"`
	}
	if err := strictJSON(b, &w); err != nil {
		return nil, fmt.Errorf("attrs (a convention graph may set axis, axis2, shape, perm, start, end, c, lo, hi, eps, lambd, values): %w", err)
	}
	a := &spec.Attrs{Axis: w.Axis, Axis2: w.Axis2, Shape: w.Shape, Perm: w.Perm, Start: w.Start, End: w.End}
	for _, f := range []struct {
		s   string
		dst **big.Rat
	}{{w.C, &a.C}, {w.Lo, &a.Lo}, {w.Hi, &a.Hi}, {w.Eps, &a.Eps}, {w.Lambd, &a.Lambd}} {
		if f.s == "" {
			continue
		}
		r, ok := new(big.Rat).SetString(f.s)
		if !ok {
			return nil, fmt.Errorf("attrs: %q is not a rational", f.s)
		}
		*f.dst = r
	}
	for _, s := range w.Values {
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return nil, fmt.Errorf("attrs: values: %q is not a rational", s)
		}
		a.Values = append(a.Values, r)
	}
	return a, nil
}
