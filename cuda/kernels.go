package cuda

import (
	"embed"
	"fmt"
)

// ptxFiles holds the hand-written PTX modules (kernels/*.ptx). They are
// embedded in every build so that the entry-point test runs without a GPU;
// only the cuda && cgo build loads them into a context.
//
//go:embed kernels/*.ptx
var ptxFiles embed.FS

// BlockThreads is the block size of every one-dimensional launch. The
// reduction kernels' shared arrays hold exactly this many floats, so they
// must be launched with it; the tree order the emulation replays depends on
// it.
const BlockThreads = 256

// MatmulTile is the edge of tl_matmul's square thread block and of its
// shared-memory tiles.
const MatmulTile = 16

// kernelSpec is one kernel entry the Go side launches: the PTX file it is
// in, its entry name and its parameter names in order. In the PTX each
// parameter is declared `.param .u64 ENTRY_NAME` (gorgonia.org/cu copies 8
// bytes per argument, so every argument is a device pointer or a u64).
type kernelSpec struct {
	File   string
	Entry  string
	Params []string
}

// kernelSpecs is the launch table: the GPU code refuses a launch whose
// argument count differs from the entry's parameter list, and a test
// compares this table with the `.entry` declarations of the embedded PTX.
var kernelSpecs = []kernelSpec{
	{"elementwise.ptx", "tl_add", []string{"a", "b", "c", "n"}},
	{"elementwise.ptx", "tl_sub", []string{"a", "b", "c", "n"}},
	{"elementwise.ptx", "tl_mul", []string{"a", "b", "c", "n"}},
	{"elementwise.ptx", "tl_relu", []string{"x", "y", "n"}},
	{"elementwise.ptx", "tl_neg", []string{"x", "y", "n"}},
	{"elementwise.ptx", "tl_broadcast", []string{"src", "dst", "n", "rank", "meta"}},
	{"elementwise.ptx", "tl_div_count", []string{"x", "y", "n", "d"}},
	{"matmul.ptx", "tl_matmul", []string{"a", "b", "c", "m", "n", "k"}},
	{"matmul.ptx", "tl_linear", []string{"x", "w", "b", "y", "rows", "in", "out"}},
	{"reduce.ptx", "tl_sum_tree", []string{"x", "partial", "n"}},
	{"reduce.ptx", "tl_sum_atomic", []string{"x", "out", "n"}},
	{"reduce.ptx", "tl_reduce_sum", []string{"x", "y", "n", "inner"}},
}

// kernelFiles lists the embedded PTX files in a fixed order.
func kernelFiles() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range kernelSpecs {
		if !seen[k.File] {
			seen[k.File] = true
			out = append(out, k.File)
		}
	}
	return out
}

// ptxSource returns the text of one embedded PTX file.
func ptxSource(file string) (string, error) {
	b, err := ptxFiles.ReadFile("kernels/" + file)
	if err != nil {
		return "", fmt.Errorf("cuda: embedded PTX %s: %w", file, err)
	}
	return string(b), nil
}

// specOf returns the launch-table entry of a kernel.
func specOf(entry string) (kernelSpec, error) {
	for _, k := range kernelSpecs {
		if k.Entry == entry {
			return k, nil
		}
	}
	return kernelSpec{}, fmt.Errorf("cuda: no kernel %s", entry)
}

// PTXFiles returns the names and texts of the embedded PTX modules, for
// tools that validate them offline (ptxas).
func PTXFiles() (map[string]string, error) {
	out := map[string]string{}
	for _, f := range kernelFiles() {
		s, err := ptxSource(f)
		if err != nil {
			return nil, err
		}
		out[f] = s
	}
	return out, nil
}
