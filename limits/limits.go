// Package limits is the one place where every resource limit of tlcheck is
// defined, documented and configured. A hostile or careless input — a
// graph, payload, tensor or certificate directory — must be rejected
// before it allocates or runs without bound, with one error line that
// names the limit, the value found and how to raise it.
//
// # The limits
//
//	limit          default   flag                 environment variable        what it bounds
//	nodes          65 536    --max-nodes          TLCHECK_MAX_NODES           nodes of one graph, checked while decoding
//	parents        4 096     --max-parents        TLCHECK_MAX_PARENTS         parents of one node (concat, add_n, …)
//	elements       2^27      --max-elements       TLCHECK_MAX_ELEMENTS        elements of one tensor: the product of its non-zero extents
//	axis           2^27      --max-axis           TLCHECK_MAX_AXIS            extent of one axis, even where another axis is 0
//	graph-elements 2^26      --max-graph-elements TLCHECK_MAX_GRAPH_ELEMENTS  elements of all the declared node shapes of a graph together
//	work           2^35      --max-work           TLCHECK_MAX_WORK            declared scalar operations of one evaluation of a graph
//	rat-work       2^24      --max-rat-work       TLCHECK_MAX_RAT_WORK        declared scalar operations of one evaluation of a graph over exact rationals
//	rat-bits       2^16      --max-rat-bits       TLCHECK_MAX_RAT_BITS        bits (numerator + denominator) of one rational a rule produces
//	rat-bits-total 2^31      --max-rat-bits-total TLCHECK_MAX_RAT_BITS_TOTAL  bits of all the rational values of one evaluation of a graph
//	cert-cases     100 000   --max-cert-cases     TLCHECK_MAX_CERT_CASES      cases of one certificate file (written or read)
//	onnx-bytes     2^30      --max-onnx-bytes     TLCHECK_MAX_ONNX_BYTES      bytes of one ONNX model or TensorProto file
//	onnx-elements  160·2^20  --max-onnx-elements  TLCHECK_MAX_ONNX_ELEMENTS   numbers of one ONNX model: tensor elements and list-attribute entries, all together
//	onnx-names     2^18      --max-onnx-names     TLCHECK_MAX_ONNX_NAMES      names of one ONNX model: node inputs, outputs and attributes, graph inputs, outputs, value infos, initializers
//	onnx-value-bytes 2^32    --max-onnx-value-bytes TLCHECK_MAX_ONNX_VALUE_BYTES bytes the tensor values of one ONNX model or TensorProto file take decoded, plus the exact values (spec.Rat) made of its floats: a file's floats at decode, a model's where the importer converts one
//	lean-lines      2^22     --max-lean-lines      TLCHECK_MAX_LEAN_LINES      lines of one lean4export NDJSON file
//	lean-line-bytes 2^20     --max-lean-line-bytes TLCHECK_MAX_LEAN_LINE_BYTES bytes of one line of a lean4export file
//	lean-bytes     2^28      --max-lean-bytes     TLCHECK_MAX_LEAN_BYTES      bytes a lean4export reader holds: its lines and its names' keys together
//
// A flag overrides the environment variable, which overrides the default.
// Every value must be a positive integer (nodes at most 2^20 and
// graph-elements at most 2^28, the wire format's hard bounds); 0, a sign
// or a fraction is an error. The commands that read untrusted input (eval, grad, diff, plan,
// certify, verify, check, gate) take the flags, through AddFlags.
//
// # Why these bound the resources
//
// Memory. Every allocation sized from a shape is bounded by an element
// count. spec.Shape.Check bounds each extent by axis and the span — the
// product of the non-zero extents, which is the element count of a shape
// without zero extents — by elements, so an array sized from any
// sub-product of a checked shape's extents (a lane index, a layer norm's
// γ over the normalised axes) has at most elements entries, also for a
// tensor without elements: [0, 2^31−1] is refused, and the lane-wise rules
// allocate nothing for an empty tensor. A graph's declared shapes hold at
// most graph-elements elements (spans) together, which bounds the value
// table of every path. Over Rat, the size of a value is bounded too: every
// result of every registry rule (forward, JVP, VJP, on every execution
// path) is refused when one of its elements has more than rat-bits bits,
// and the IR semantics (irsem.DenoteAll, which every command that
// evaluates a graph over Rat runs first, also before the tape and typed
// graph paths) refuses the graph as soon as the values it has computed
// hold more than rat-bits-total bits together (256 MiB by default; that
// count also covers the rules irsem implements itself: conv and the
// pools). The other paths compute the same forward values
// (that they do is what diff checks), and their gradient values are held
// to rat-bits each. Decoding stops at the first node past nodes, so a
// graph of 2^20 + 1 nodes costs what its first nodes cost.
//
// ONNX files. The reader (package onnx) refuses a file of more than
// onnx-bytes bytes before reading it, and bounds what decoding allocates
// beyond the file's own bytes (strings are at most the file's bytes): an
// ONNX node counts against nodes, its inputs, outputs and attributes each
// against parents, the named things of the whole model (node inputs,
// outputs and attributes, graph values, initializers) against onnx-names
// (at most a few hundred bytes of Go structure each: 2^18 of them are
// well under 100 MiB), and the numbers of the whole model — the elements
// of every initializer and tensor attribute and the entries of every list
// attribute, the dims of every tensor and value — against onnx-elements
// (at most 8 bytes per unit counted; a string entry or a value's dim counts
// 3; one tensor's dims are also held to elements and axis by
// spec.Shape.Check). The onnx package doc gives the resulting bound. A length
// prefix is compared with the bytes that remain before anything is
// allocated, and a tensor's declared dims are compared with its data
// before its elements are.
// A lean4export file (leanbridge/lean4export) is read one line at a
// time: a line longer than lean-line-bytes is refused as soon as that many
// bytes are buffered, and the line count by lean-lines, so the parsed
// records — each a constant number of words plus the bytes of its line —
// take memory linear in at most lean-lines × lean-line-bytes input bytes;
// lean-bytes bounds what the reader holds in bytes: the lines it keeps and
// the canonical keys of the names it declares, which grow with the depth
// of a name (a chain of n one-component names holds Θ(n²) key bytes; a
// 2^22-line chain took 23 GB before this limit), so the memory of a parse
// is at most a constant per line times lean-lines plus a small multiple
// of lean-bytes.
//
// Time. The declared work of a node (irsem.DeclaredWork) is computed from
// the declared shapes before anything runs: the parents' elements plus the
// output's elements times the contraction length (the inner dimension of
// matmul and linear, from the registry's OpInfo.Contraction; for a
// convolution in_channels/groups × kernel elements, for a pool the kernel
// elements; 1 for every other node). Every rule performs at most a small
// constant number of scalar operations per unit of declared work (a
// multiply-add per term of a contraction; a few per element for the
// elementwise, lane-wise and shape rules), and the sum over the graph is
// at most work. Each operand over Rat has at most rat-bits bits when the
// rule starts (it is a checked result, or a decoded rational, whose
// spelling has at most 4 096 bytes). Inside one rule a running sum can
// grow — n terms with distinct denominators give up to n·rat-bits bits —
// so the cost of one rule is bounded by its declared work times the cost
// of arithmetic on numbers of contraction·rat-bits bits; its result is
// then checked before any other rule reads it. These limits are refusals
// of an input, not verdicts: a refusal is bad input (exit 2), never an
// obligation failure, and no obligation is decided by them.
//
// How the defaults were chosen (docs/performance.md has the table and the
// arithmetic; tools/perf/imagenet_sizes.py recomputes it): they admit the
// ONNX model-zoo ImageNet nets at batch 1 — ResNet-50, VGG-19,
// DenseNet-121, Inception v1/v2, SqueezeNet, ShuffleNet, AlexNet, ZFNet —
// counted from their published architectures, with margin: the largest
// tensor is VGG-19's 102.8 M-element fc6 weight (elements, axis: 2^27),
// the most node-output elements are DenseNet-121's 48.8 M (graph-elements:
// 2^26), the most declared work VGG-19's 19.7·10^9 (work: 2^35), the most
// parameters VGG-19's 143.7 M, 575 MB as float32 (onnx-elements: 160·2^20,
// onnx-bytes: 2^30). Memory at these limits: a model's float numbers are
// held decoded (4 bytes a float32) and, where a reader needs them, once as
// exact values (a 32-byte spec.Rat, shared by the importer and the
// payload); a linear, conv or conv_transpose weight never is (the payload
// holds its decoded plane). onnx-value-bytes charges exactly that, before
// allocating: 4 or 8 bytes an element at decode, and 32 more where the
// importer converts a float (an initializer another op reads, a Constant,
// a tensor holding −∞; a TensorProto file's floats at decode), 4 GiB in all
// at its default (2^32: VGG-19's 143.7 M floats take 0.58 GB, AlexNet's
// 61 M 0.24 GB; a model whose floats all become exact values still gets
// about 119 M of them). Evaluating one node converts its parameters to the
// evaluation's scalar, for that node only — except that compare's dense
// layers (linear, conv, conv_transpose) read their weights as a float64
// plane (spec.DensePlane); a value table costs at most 32 bytes per graph
// element (2.1 GiB), and irsem.Denote holds only its live part
// (docs/performance.md, "vgg36", measures VGG-19's compare at these
// defaults). Exact rational arithmetic is what is slow, so evaluation over
// Rat keeps the former work default as its own limit, rat-work (checked by
// irsem.DenoteAll over Rat, which every Rat path runs first): a graph the
// float and interval paths evaluate in seconds may still be refused over
// Rat. compare and compare-grad, which need the exact values only as the
// centre of a rounding-error enclosure, do not refuse past rat-work,
// rat-bits or rat-bits-total: fpbound then encloses the same exact values
// by a ball or interval evaluation (bounded by work and its own work cap),
// and says so (go doc ./fpbound, "The exact enclosure"); every other
// command's result is the exact value itself, so it still refuses.
//
// Measured on the 2-core development machine (README, section Limits), with
// the former defaults (graph-elements 2^20, work 2^24):
// at the defaults the heaviest legal input found, a 4-node graph of 2^20
// elements over Rat under diff, took 49 s and 1.9 GB; every hostile input
// of issue 10 is refused in under 64 MiB. The Go runtime's own
// out-of-memory failure cannot be turned into an error line, so under a
// memory limit smaller than what the defaults allow, lower the limits.
//
// Error lines never echo their input unbounded: Quote and Short render at
// most QuoteBytes bytes of a string taken from an input, and cli.Report
// cuts a line at LineBytes (Line).
package limits

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// Limits is one setting of every limit; the zero value of a field means
// its default (Default).
type Limits struct {
	Nodes          int   // nodes of one graph
	Parents        int   // parents of one node
	Elements       int   // elements of one tensor
	Axis           int   // extent of one axis
	GraphElements  int64 // elements of all declared node shapes of one graph
	Work           int64 // declared scalar operations of one graph evaluation
	RatWork        int64 // declared scalar operations of one graph evaluation over Rat
	RatBits        int   // bits of one rational result (numerator + denominator)
	RatBitsTotal   int64 // bits of all rational values of one evaluation
	CertCases      int   // cases of one certificate file
	ONNXBytes      int64 // bytes of one ONNX model or TensorProto file
	ONNXElements   int64 // numbers (tensor elements, list-attribute entries) of one ONNX model
	ONNXNames      int   // names of one ONNX model
	ONNXValueBytes int64 // bytes of the decoded tensor values (and their exact values) of one ONNX model or tensor file
	LeanLines      int   // lines of one lean4export NDJSON file
	LeanLineBytes  int   // bytes of one line of a lean4export file
	LeanBytes      int64 // bytes of lines and name keys a lean4export reader holds
}

// Defaults. DefaultElements is spec.DefaultMaxElements.
const (
	DefaultNodes          = 1 << 16
	DefaultParents        = 1 << 12
	DefaultElements       = 1 << 27
	DefaultAxis           = 1 << 27
	DefaultGraphElements  = 1 << 26
	DefaultWork           = 1 << 35
	DefaultRatWork        = 1 << 24
	DefaultRatBits        = 1 << 16
	DefaultRatBitsTotal   = 1 << 31
	DefaultCertCases      = 100_000
	DefaultONNXBytes      = 1 << 30
	DefaultONNXElements   = 160 << 20
	DefaultONNXNames      = 1 << 18
	DefaultONNXValueBytes = 1 << 32
	DefaultLeanLines      = 1 << 22
	DefaultLeanLineBytes  = 1 << 20
	DefaultLeanBytes      = 1 << 28
)

// Default returns the built-in limits.
func Default() Limits {
	return Limits{
		Nodes: DefaultNodes, Parents: DefaultParents, Elements: DefaultElements, Axis: DefaultAxis,
		GraphElements: DefaultGraphElements, Work: DefaultWork, RatWork: DefaultRatWork, RatBits: DefaultRatBits, RatBitsTotal: DefaultRatBitsTotal,
		CertCases: DefaultCertCases, ONNXBytes: DefaultONNXBytes, ONNXElements: DefaultONNXElements, ONNXNames: DefaultONNXNames, ONNXValueBytes: DefaultONNXValueBytes,
		LeanLines: DefaultLeanLines, LeanLineBytes: DefaultLeanLineBytes, LeanBytes: DefaultLeanBytes,
	}
}

// knobs lists every limit in the order of the package doc's table, with
// accessors that read and write its field as an int64, and the largest
// value a flag or variable may set.
var knobs = []struct {
	name, doc string
	get       func(*Limits) int64
	set       func(*Limits, int64)
	max       int64
}{
	{"nodes", "most nodes in one graph", func(l *Limits) int64 { return int64(l.Nodes) }, func(l *Limits, v int64) { l.Nodes = int(v) }, 1 << 20},
	{"parents", "most parents of one node", func(l *Limits) int64 { return int64(l.Parents) }, func(l *Limits, v int64) { l.Parents = int(v) }, 1 << 30},
	{"elements", "most elements in one tensor", func(l *Limits) int64 { return int64(l.Elements) }, func(l *Limits, v int64) { l.Elements = int(v) }, 1 << 40},
	{"axis", "largest extent of one axis", func(l *Limits) int64 { return int64(l.Axis) }, func(l *Limits, v int64) { l.Axis = int(v) }, 1 << 40},
	{"graph-elements", "most elements in all the node shapes of one graph", func(l *Limits) int64 { return l.GraphElements }, func(l *Limits, v int64) { l.GraphElements = v }, 1 << 28},
	{"work", "most declared scalar operations of one graph evaluation", func(l *Limits) int64 { return l.Work }, func(l *Limits, v int64) { l.Work = v }, 1 << 60},
	{"rat-work", "most declared scalar operations of one graph evaluation over exact rationals", func(l *Limits) int64 { return l.RatWork }, func(l *Limits, v int64) { l.RatWork = v }, 1 << 60},
	{"rat-bits", "most bits (numerator + denominator) of one rational result", func(l *Limits) int64 { return int64(l.RatBits) }, func(l *Limits, v int64) { l.RatBits = int(v) }, 1 << 40},
	{"rat-bits-total", "most bits of all rational values of one evaluation", func(l *Limits) int64 { return l.RatBitsTotal }, func(l *Limits, v int64) { l.RatBitsTotal = v }, 1 << 50},
	{"cert-cases", "most cases in one certificate file", func(l *Limits) int64 { return int64(l.CertCases) }, func(l *Limits, v int64) { l.CertCases = int(v) }, 1 << 30},
	{"onnx-bytes", "most bytes in one ONNX model or TensorProto file", func(l *Limits) int64 { return l.ONNXBytes }, func(l *Limits, v int64) { l.ONNXBytes = v }, 1 << 40},
	{"onnx-elements", "most numbers (tensor elements, list-attribute entries) in one ONNX model", func(l *Limits) int64 { return l.ONNXElements }, func(l *Limits, v int64) { l.ONNXElements = v }, 1 << 40},
	{"onnx-names", "most names (node inputs and outputs, graph values) in one ONNX model", func(l *Limits) int64 { return int64(l.ONNXNames) }, func(l *Limits, v int64) { l.ONNXNames = int(v) }, 1 << 30},
	{"onnx-value-bytes", "most bytes the tensor values of one ONNX model or TensorProto file take decoded, with the exact values made of them", func(l *Limits) int64 { return l.ONNXValueBytes }, func(l *Limits, v int64) { l.ONNXValueBytes = v }, 1 << 40},
	{"lean-lines", "most lines in one lean4export NDJSON file", func(l *Limits) int64 { return int64(l.LeanLines) }, func(l *Limits, v int64) { l.LeanLines = int(v) }, 1 << 30},
	{"lean-line-bytes", "most bytes in one line of a lean4export file", func(l *Limits) int64 { return int64(l.LeanLineBytes) }, func(l *Limits, v int64) { l.LeanLineBytes = int(v) }, 1 << 30},
	{"lean-bytes", "most bytes of lines and name keys a lean4export reader holds", func(l *Limits) int64 { return l.LeanBytes }, func(l *Limits, v int64) { l.LeanBytes = v }, 1 << 40},
}

// Flag is the command-line flag that raises the named limit ("--max-nodes").
func Flag(name string) string { return "--max-" + name }

// Env is the environment variable that raises the named limit
// ("TLCHECK_MAX_NODES").
func Env(name string) string {
	return "TLCHECK_MAX_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// fill replaces zero fields by their defaults.
func (l Limits) fill() Limits {
	d := Default()
	for _, k := range knobs {
		if k.get(&l) <= 0 {
			k.set(&l, k.get(&d))
		}
	}
	return l
}

var current atomic.Pointer[Limits]

// Current returns the limits in force: those last passed to Set, or the
// defaults (the environment is read only by FromEnv and AddFlags, so a
// library caller gets the documented defaults unless it sets others).
func Current() Limits {
	if p := current.Load(); p != nil {
		return *p
	}
	return Default()
}

// Set makes l (zero fields replaced by their defaults) the limits in force
// and returns a function that restores the previous ones.
func Set(l Limits) (restore func()) {
	l = l.fill()
	prev := current.Swap(&l)
	return func() { current.Store(prev) }
}

// parse reads a positive integer limit value.
func parse(v string, max int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, fmt.Errorf("not a positive integer: %s", Quote(v))
	}
	if n > max {
		return 0, fmt.Errorf("%d is more than %d", n, max)
	}
	return n, nil
}

// FromEnv returns the defaults with every limit whose environment
// variable is set (per getenv; nil means os.Getenv) replaced by its value.
func FromEnv(getenv func(string) string) (Limits, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	l := Default()
	for _, k := range knobs {
		v := getenv(Env(k.name))
		if v == "" {
			continue
		}
		n, err := parse(v, k.max)
		if err != nil {
			return Limits{}, fmt.Errorf("%s: %v", Env(k.name), err)
		}
		k.set(&l, n)
	}
	return l, nil
}

// limitValue is the flag.Value of one --max-… flag; it writes the limit in
// force as soon as the flag is parsed.
type limitValue struct {
	k   int
	def int64
}

func (v *limitValue) String() string {
	if v == nil || v.def == 0 {
		return ""
	}
	return strconv.FormatInt(v.def, 10)
}

func (v *limitValue) Set(s string) error {
	k := knobs[v.k]
	n, err := parse(s, k.max)
	if err != nil {
		return err
	}
	l := Current()
	k.set(&l, n)
	Set(l)
	return nil
}

// AddFlags is the one helper every command that reads untrusted input
// calls on its flag set: it makes the limits in force the defaults
// overridden by the environment (FromEnv) and registers one --max-NAME
// flag per limit, whose value, once parsed, overrides that limit. An
// environment variable that is not a positive integer is an error.
func AddFlags(fs *flag.FlagSet) error {
	l, err := FromEnv(nil)
	if err != nil {
		return err
	}
	Set(l)
	for i, k := range knobs {
		fs.Var(&limitValue{k: i, def: k.get(&l)}, "max-"+k.name, k.doc+" ("+Env(k.name)+")")
	}
	return nil
}

// Error reports an input that exceeds a limit. Its text names what
// exceeded it, by how much, and how to raise it.
type Error struct {
	Limit string // the limit's name ("nodes", "rat-bits", …)
	What  string // what exceeded it ("the graph has 1048577 nodes")
	Max   int64  // the limit in force
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: over the %s limit %d (raise it with %s or %s)", e.What, e.Limit, e.Max, Flag(e.Limit), Env(e.Limit))
}

// Exceeded returns an *Error for the named limit.
func Exceeded(limit string, max int64, format string, args ...any) error {
	return &Error{Limit: limit, Max: max, What: fmt.Sprintf(format, args...)}
}

// IsLimit reports whether err is (or wraps) a limits *Error.
func IsLimit(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// QuoteBytes is the most bytes of an input string that Quote renders.
const QuoteBytes = 64

// Quote renders s for an error line as a Go-quoted string of at most
// QuoteBytes bytes of s (cut at a rune boundary), followed by "… (N bytes)"
// when s is longer, so that an error line stays short whatever the input.
func Quote(s string) string {
	if len(s) <= QuoteBytes {
		return strconv.Quote(s)
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// Short renders s unquoted for an error line: s itself when it has at most
// QuoteBytes bytes, else its first QuoteBytes bytes (cut at a rune
// boundary) followed by "… (N bytes)"; either way escaped (Escape), so
// that no input string can forge a line or drive a terminal.
func Short(s string) string {
	if len(s) <= QuoteBytes {
		return Escape(s)
	}
	cut := QuoteBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return Escape(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// Escape renders every character of s that a terminal would not print as
// itself in Go's escape syntax: control characters (\n, \r, \x1b — the
// start of an ANSI sequence —, NUL), other non-printable runes such as the
// bidirectional overrides (\u202e) and line separators (\u2028), and the
// bytes of invalid UTF-8 (\xff). Printable text, spaces included, is
// left as it is (a backslash too: Escape is for display, not a reversible
// encoding). The result holds no byte below 0x20 and no rune a terminal
// or a bidirectional layout would act on.
func Escape(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r) || r == ' ':
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// LineBytes is the most bytes of one error line (cli.Report cuts a longer
// one): a backstop behind Quote and Short, so that no input can make an
// error line long.
const LineBytes = 2048

// Line cuts msg to at most LineBytes bytes (at a rune boundary, marking
// the cut with "…").
func Line(msg string) string {
	if len(msg) <= LineBytes {
		return msg
	}
	cut := LineBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}
