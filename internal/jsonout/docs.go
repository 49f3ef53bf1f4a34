package jsonout

// CheckResult is one op × obligation of check (and of the gate's check
// stage). The worst measure over the decided cases is a number named by
// what it measures, present only where it applies:
//
//	worst_bits   adjointness over Rat: the largest total bit length (numerator + denominator) of an exact inner product
//	worst_width  adjointness over Interval: the widest enclosure of an inner product
//	worst_rel    derivative: the worst proven relative distance between the two enclosures
//	inconclusive derivative: cases whose branch the enclosures could not decide (not counted in cases)
//
// Agreement is "exact" or "overlap" for the other obligations (exact
// equality, or overlapping enclosures), "" where a worst_* field says more.
type CheckResult struct {
	Op           string         `json:"op"`
	Obligation   string         `json:"obligation"`
	Cases        int            `json:"cases"`
	Oracles      map[string]int `json:"oracles"`
	WorstBits    *int           `json:"worst_bits,omitempty"`
	WorstWidth   *Number        `json:"worst_width,omitempty"`
	WorstRel     *Number        `json:"worst_rel,omitempty"`
	Inconclusive *int           `json:"inconclusive,omitempty"`
	Agreement    string         `json:"agreement,omitempty"`
	Holds        bool           `json:"holds"`
	Failure      string         `json:"failure,omitempty"`
	Replay       string         `json:"replay,omitempty"`
}

// CheckDoc is check's document, tlcheck.check.v1. Case is the replayed
// case (--case), null when cases 0 … cases−1 ran.
type CheckDoc struct {
	Header
	Ops        []string      `json:"ops"`
	Cases      int           `json:"cases"`
	Graphs     int           `json:"graphs"`
	Case       *int          `json:"case"`
	PlantFault string        `json:"plant_fault,omitempty"`
	Results    []CheckResult `json:"results"`
	Failures   int           `json:"failures"`
	Holds      bool          `json:"holds"`
}

// GateItem is one checked item of a gate stage, one JUnit test case.
// Seconds is its share of the stage's wall time (see GateStage).
// The numeric details present depend on the stage: check items carry
// their CheckResult; refine items the case count, reduction policy, rule
// and worst error/bound ratio (and every case's ratio); certify items the
// file's SHA-256; verify items the case count.
type GateItem struct {
	Name       string       `json:"name"`
	Holds      bool         `json:"holds"`
	Seconds    float64      `json:"seconds"`
	Failure    string       `json:"failure,omitempty"`
	Check      *CheckResult `json:"check,omitempty"`
	Cases      *int         `json:"cases,omitempty"`
	Policy     string       `json:"policy,omitempty"`
	Rule       string       `json:"rule,omitempty"`
	WorstRatio *Number      `json:"worst_ratio,omitempty"`
	Ratios     []Number     `json:"ratios,omitempty"`
	SHA256     string       `json:"sha256,omitempty"`
}

// GateStage is one stage of the gate. Seconds is its wall time. The
// items' seconds are measured per item where the item runs alone (a
// refine pair); a primitive's obligations are decided together, case by
// case, so its measured time is split evenly among them; certify and
// verify items share their stage's time evenly.
type GateStage struct {
	Stage    string     `json:"stage"`
	Seconds  float64    `json:"seconds"`
	Error    string     `json:"error,omitempty"`
	Items    []GateItem `json:"items"`
	Failures int        `json:"failures"`
}

// GateDoc is the gate's document, tlcheck.gate.v1.
type GateDoc struct {
	Header
	Cases        int         `json:"cases"`
	Graphs       int         `json:"graphs"`
	CertCases    int         `json:"cert_cases"`
	Certificates string      `json:"certificates"`
	Stages       []GateStage `json:"stages"`
	Failures     int         `json:"failures"`
	Holds        bool        `json:"holds"`
}

// DiffFailure is the first disagreement of one comparison: the node
// (−1: the whole graph), its op, the element (−1: the whole value), and
// both sides as the comparison printed them.
type DiffFailure struct {
	Obligation string `json:"obligation"`
	Node       int    `json:"node"`
	Op         string `json:"op,omitempty"`
	Element    int    `json:"element"`
	LHS        string `json:"lhs"`
	RHS        string `json:"rhs"`
	Detail     string `json:"detail,omitempty"`
	Message    string `json:"message"`
}

// DiffCheck is one comparison of diff.
type DiffCheck struct {
	Scalar  string       `json:"scalar"`
	What    string       `json:"what"`
	A       string       `json:"a"`
	B       string       `json:"b"`
	Nodes   int          `json:"nodes"`
	Agree   bool         `json:"agree"`
	Failure *DiffFailure `json:"failure,omitempty"`
}

// DiffDoc is diff's document, tlcheck.diff.v1.
type DiffDoc struct {
	Header
	GraphSHA256 string      `json:"graph_sha256"`
	Nodes       int         `json:"nodes"`
	Checks      []DiffCheck `json:"checks"`
	Skipped     []string    `json:"skipped"`
	Agree       bool        `json:"agree"`
}

// EvalNode is one node's value.
type EvalNode struct {
	ID    int    `json:"id"`
	Kind  string `json:"kind"`
	Value Tensor `json:"value"`
}

// EvalDoc is eval's document, tlcheck.eval.v1; Nodes is present with
// --all.
type EvalDoc struct {
	Header
	Scalar string     `json:"scalar"`
	Path   string     `json:"path"`
	Nodes  []EvalNode `json:"nodes,omitempty"`
	Output EvalNode   `json:"output"`
	Stats  *Stats     `json:"stats,omitempty"`
}

// GradValues are the gradients of grad.
type GradValues struct {
	Input  Tensor            `json:"input"`
	Params map[string]Tensor `json:"params"`
}

// GradDoc is grad's document, tlcheck.grad.v1.
type GradDoc struct {
	Header
	Scalar string     `json:"scalar"`
	Path   string     `json:"path"`
	Loss   Tensor     `json:"loss"`
	Grad   GradValues `json:"grad"`
	Stats  *Stats     `json:"stats,omitempty"`
}

// VerifyFile is one certificate file's verdict.
type VerifyFile struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Cases int    `json:"cases"`
	Holds bool   `json:"holds"`
	Error string `json:"error,omitempty"`
}

// VerifyDoc is verify's document, tlcheck.verify.v1; the seed is the
// manifest's and the inputs name the manifest.
type VerifyDoc struct {
	Header
	Directory string       `json:"directory"`
	Files     []VerifyFile `json:"files"`
	Cases     int          `json:"cases"`
	Failures  int          `json:"failures"`
	Holds     bool         `json:"holds"`
}

// PlanKernel is one kernel of a planned node.
type PlanKernel struct {
	Op        string `json:"op"`
	Capsule   string `json:"capsule"`
	Provider  string `json:"provider"`
	Reduction string `json:"reduction"`
}

// PlanNode is one node of a plan.
type PlanNode struct {
	Node    int          `json:"node"`
	Tag     string       `json:"tag"`
	Source  bool         `json:"source"`
	Kernels []PlanKernel `json:"kernels"`
	Reasons []string     `json:"reasons"`
}

// PlanBinding says whether an accepted plan's capsules bind to runtime
// handlers.
type PlanBinding struct {
	OK      bool   `json:"ok"`
	Kernels int    `json:"kernels"`
	Error   string `json:"error,omitempty"`
}

// PlanDoc is plan's document, tlcheck.plan.v1; Binding is null when the
// plan is rejected.
type PlanDoc struct {
	Header
	Profile  string       `json:"profile"`
	Nodes    []PlanNode   `json:"nodes"`
	Accepted bool         `json:"accepted"`
	Verdict  string       `json:"verdict"`
	Binding  *PlanBinding `json:"binding"`
	Holds    bool         `json:"holds"`
}

// CertifyFile is one file certify wrote, as its manifest lists it.
type CertifyFile struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	SHA256 string `json:"sha256"`
}

// CertifyDoc is certify's document, tlcheck.certify.v1.
type CertifyDoc struct {
	Header
	Directory      string        `json:"directory"`
	Cases          int           `json:"cases"`
	ManifestSHA256 string        `json:"manifest_sha256"`
	Files          []CertifyFile `json:"files"`
}

// TapeExampleDoc is tape-example's document, tlcheck.tape-example.v1.
type TapeExampleDoc struct {
	Header
	Scalar     string `json:"scalar"`
	Detach     bool   `json:"detach"`
	Output     int    `json:"output"`
	TapeLen    int    `json:"tape_length"`
	Loss       Tensor `json:"loss"`
	Grad       Tensor `json:"grad"`
	Reached    []int  `json:"reached"`
	ClosedForm string `json:"closed_form"`
	Want       Tensor `json:"want"`
	Holds      bool   `json:"holds"`
}

// CompareElement is one output element of compare: its flat index, the
// recorded float32 value, an enclosure of the exact value, the a-priori
// bound (absent for a Gradient output) and the verdict.
type CompareElement struct {
	Index    int      `json:"index"`
	Recorded Number   `json:"recorded"`
	Exact    Interval `json:"exact"`
	Bound    *Number  `json:"bound,omitempty"`
	Verdict  string   `json:"verdict"`
}

// CompareOutput is one recorded output of compare: MaxErr encloses the
// largest |recorded − exact| over its elements, Bound is the largest
// a-priori bound (absent for a Gradient output, Gradient naming its node),
// Ours encloses the largest |f32 − exact| of tlcheck's own binary32
// evaluation (reported, never decided on); First is the first failing
// element, else the first inconclusive one.
type CompareOutput struct {
	Name         string          `json:"name"`
	Shape        []int           `json:"shape"`
	Gradient     string          `json:"gradient,omitempty"`
	Elements     int             `json:"elements"`
	MaxErr       Interval        `json:"max_err"`
	Bound        *Number         `json:"bound,omitempty"`
	Ours         *Interval       `json:"ours,omitempty"`
	Holds        int             `json:"holds"`
	Fails        int             `json:"fails"`
	Inconclusive int             `json:"inconclusive"`
	First        *CompareElement `json:"first,omitempty"`
	// Centre names the evaluation that encloses the exact values of a
	// model output: "exact" (rational), "ball", "float64" (the float64
	// evaluation ± its binary64 first-order bound) or "interval"; absent for
	// an integer, boolean or Gradient output.
	Centre string `json:"centre,omitempty"`
	// CentreFallback is the exact-arithmetic limit the rational
	// evaluation ran past, where the output is exact over the rationals
	// but its centre is not "exact"; absent otherwise.
	CentreFallback string `json:"centre_fallback,omitempty"`
}

// CompareSet is one recorded data set of compare.
type CompareSet struct {
	Directory string          `json:"directory"`
	Outputs   []CompareOutput `json:"outputs"`
}

// CompareDoc is compare's document, tlcheck.compare.v1. Verdict is
// "fails" when any element fails, else "inconclusive" when any is, else
// "holds".
type CompareDoc struct {
	Header
	Model        string       `json:"model"`
	ULPs         int          `json:"ulps"`
	Profile      string       `json:"profile,omitempty"` // the runtime profile (fpbound.Profiles), absent for the default "ieee"
	Strict       bool         `json:"strict"`
	Sets         []CompareSet `json:"sets"`
	Holds        int          `json:"holds"`
	Fails        int          `json:"fails"`
	Inconclusive int          `json:"inconclusive"`
	Verdict      string       `json:"verdict"`
	Stats        *Stats       `json:"stats,omitempty"`
}

// CompareGradDoc is compare-grad's output: every gradient the model has
// (a float input, or an initializer read as data), judged against the
// exact gradient within fpbound's binary32 reverse-mode bound. Verdict is
// "fails" when any element provably lies outside its bound (exit 1),
// "inconclusive" when none does but one is undecided, else "holds".
type CompareGradDoc struct {
	Header
	Model        string              `json:"model"`
	ULPs         int                 `json:"ulps"`
	Profile      string              `json:"profile,omitempty"` // the runtime profile (fpbound.Profiles), absent for the default "ieee"
	Grads        []CompareGradTensor `json:"grads"`
	Holds        int                 `json:"holds"`
	Fails        int                 `json:"fails"`
	Inconclusive int                 `json:"inconclusive"`
	Verdict      string              `json:"verdict"`
}

// CompareGradTensor is one named gradient. Status is "checked", "not_given"
// (the dump lacks it) or "constant" (the IR reads it only as a constant,
// which has no gradient there); the counts and differences are set when
// checked. MaxAbs is the upper end of the enclosure of the greatest
// |recorded − exact| and MaxRel the greatest of those over min |exact|
// (+Inf when the exact enclosure holds 0), each with its multi-dimensional
// index: reported, never decided on. First is the first failing element,
// else the first inconclusive one (Index is its row-major index). Elements,
// with compare-grad --elements only, lists every checked element in
// row-major order. ByClassic, ByBoxed and ByCombined count the checked
// elements whose verdict used the classic, the boxed and the combined
// first-order bound (fpbound.GradSharp.Decider; the rest had no finite
// bound); v2 added ByClassic, ByBoxed and CompareGradElement's DecidedBy,
// v3 ByCombined and DecidedBy's "combined" (v2 counted a combined
// decision as boxed).
type CompareGradTensor struct {
	Name         string               `json:"name"`
	Shape        []int                `json:"shape"`
	Status       string               `json:"status"`
	Holds        int                  `json:"holds"`
	Fails        int                  `json:"fails"`
	Inconclusive int                  `json:"inconclusive"`
	ByClassic    int                  `json:"by_classic"`
	ByBoxed      int                  `json:"by_boxed"`
	ByCombined   int                  `json:"by_combined"`
	MaxAbs       *Number              `json:"max_abs,omitempty"`
	MaxAbsIndex  []int                `json:"max_abs_index,omitempty"`
	MaxRel       *Number              `json:"max_rel,omitempty"`
	MaxRelIndex  []int                `json:"max_rel_index,omitempty"`
	First        *CompareGradElement  `json:"first,omitempty"`
	Elements     []CompareGradElement `json:"elements,omitempty"`
}

// CompareGradElement is one gradient element of compare-grad: a
// CompareElement and the sound bound its verdict used (DecidedBy:
// fpbound.GradSharp.Decider's "classic", "boxed", "combined", or "none" when no bound is
// finite).
type CompareGradElement struct {
	Index     int      `json:"index"`
	Recorded  Number   `json:"recorded"`
	Exact     Interval `json:"exact"`
	Bound     *Number  `json:"bound,omitempty"`
	Verdict   string   `json:"verdict"`
	DecidedBy string   `json:"decided_by"`
}

// OnnxMapValue is one ONNX graph input or output: its name, shape, ONNX
// element type and offset into the packed IR input or output.
type OnnxMapValue struct {
	Name     string `json:"name"`
	Shape    []int  `json:"shape"`
	DataType string `json:"data_type"`
	Offset   int    `json:"offset"`
}

// OnnxMapUse is one use of an initializer: the IR node and payload field
// ("value" for a const node) that holds it.
type OnnxMapUse struct {
	Node  int    `json:"node"`
	Field string `json:"field"`
}

// OnnxMapInit is one initializer and its uses.
type OnnxMapInit struct {
	Name  string       `json:"name"`
	Shape []int        `json:"shape"`
	Uses  []OnnxMapUse `json:"uses"`
}

// OnnxMapDoc is the map import writes next to the graph and payload,
// tlcheck.onnx-map.v1: the model's float inputs and outputs with their
// offsets, every initializer's payload uses, and per IR node id the ONNX
// node it came from ("" for the input and packing nodes).
type OnnxMapDoc struct {
	Header
	Model        string         `json:"model"`
	Opset        int64          `json:"opset"`
	Graph        string         `json:"graph"`
	Payload      string         `json:"payload"`
	GraphInputs  []OnnxMapValue `json:"graph_inputs"`
	GraphOutputs []OnnxMapValue `json:"graph_outputs"`
	Initializers []OnnxMapInit  `json:"initializers"`
	Origin       []string       `json:"origin"`
}

// ImportFile is one file import wrote.
type ImportFile struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	SHA256 string `json:"sha256"`
}

// ImportDoc is import's --json document, tlcheck.import.v1: the files
// written.
type ImportDoc struct {
	Header
	Directory string       `json:"directory"`
	Files     []ImportFile `json:"files"`
}

// AdaptersRow is one obligation of one case on one engine machine in
// tlcheck adapters run: the verdict is holds, convention, suspect,
// inconclusive or fails (only fails is a finding); detail names the first
// element outside with the engine's value, the exact value and the
// bounds, or the smallest counterexample of a failure.
type AdaptersRow struct {
	Machine    string   `json:"machine"`
	Case       string   `json:"case"`
	Ops        []string `json:"ops"`
	Obligation string   `json:"obligation"`
	Verdict    string   `json:"verdict"`
	Detail     string   `json:"detail"`
}

// AdaptersEngine is one engine's part of the adapters document: its
// module, machines, the registry primitives its checked cases cover, its
// rows, the cases it skipped (with the adapter's reason) and its count of
// failing rows.
type AdaptersEngine struct {
	Engine   string        `json:"engine"`
	Module   string        `json:"module"`
	Machines []string      `json:"machines"`
	Ops      []string      `json:"ops"`
	Rows     []AdaptersRow `json:"rows"`
	Skipped  []string      `json:"skipped"`
	Fails    int           `json:"fails"`
}

// AdaptersDoc is tlcheck adapters run's document, tlcheck.adapters.v1:
// no seed (the cases are fixed), no inputs; holds is true iff no row
// fails.
type AdaptersDoc struct {
	Header
	Engines []AdaptersEngine `json:"engines"`
	Fails   int              `json:"fails"`
	Holds   bool             `json:"holds"`
}

// Stats are a run's resource measurements, present only when asked for
// (--stats), so that a document without them stays byte-identical for the
// same inputs. They describe the machine and the run, not the result, and
// are not deterministic.
type Stats struct {
	// PeakRSSBytes is the process's peak resident set size in bytes, read
	// with getrusage(RUSAGE_SELF) after the run (ru_maxrss).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
}
