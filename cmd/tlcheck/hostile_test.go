package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The hostile-input table (issue 26): every command that reads a file ×
// the kind of file it reads × a hostility. Each case runs tlcheck as a
// process (the test binary in main mode) with the default limits, and
// must exit with the documented code (2 for bad input) printing exactly
// one line on stderr, within hostileWall, at a peak resident set size
// (getrusage's ru_maxrss of the child) under hostileRSS. A reader that
// blocks on a FIFO or spins on /dev/zero is killed at the deadline and
// fails the case.
const (
	hostileWall = 10 * time.Second
	hostileRSS  = 2 << 30 // bytes
)

// hostileResult is what one hostile run did.
type hostileResult struct {
	code    int
	stderr  string
	rss     int64 // peak resident set size, bytes
	wall    time.Duration
	timeout bool
}

// runHostile runs tlcheck args as a child process in dir.
func runHostile(t *testing.T, dir string, args ...string) hostileResult {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hostileWall)
	defer cancel()
	var errb strings.Builder
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir, cmd.Stderr = dir, &errb
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	start := time.Now()
	err = cmd.Run()
	res := hostileResult{wall: time.Since(start), stderr: errb.String(), timeout: ctx.Err() != nil}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	res.code = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		res.rss = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	return res
}

// checkHostile asserts the table's contract on one result.
func checkHostile(t *testing.T, name string, res hostileResult, code int, want string) {
	t.Helper()
	switch {
	case res.timeout:
		t.Errorf("%s: still running after %v (killed)", name, hostileWall)
	case res.code != code:
		t.Errorf("%s: exit %d, want %d; stderr %.300q", name, res.code, code, res.stderr)
	case code != 0 && (strings.Count(res.stderr, "\n") != 1 || !strings.HasSuffix(res.stderr, "\n")):
		t.Errorf("%s: stderr is not one line: %.300q", name, res.stderr)
	case want != "" && !strings.Contains(res.stderr, want):
		t.Errorf("%s: stderr %q does not say %q", name, res.stderr, want)
	case res.rss > hostileRSS:
		t.Errorf("%s: peak RSS %d MiB, over %d MiB", name, res.rss>>20, hostileRSS>>20)
	}
	if testing.Verbose() {
		t.Logf("%-70s exit %d  %6.2fs  %5d MiB", name, res.code, res.wall.Seconds(), res.rss>>20)
	}
}

// TestHostileSpecialFiles: a FIFO, /dev/zero or a directory named as any
// input file of any command is refused with one line, exit 2, at once
// (issue 26 point 2: these blocked or spun until killed).
func TestHostileSpecialFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	if testing.Short() {
		t.Skip("runs tlcheck as ~100 processes")
	}
	dir := t.TempDir()
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	// Each kind of special file is made as KIND/x.pb and, inside the data
	// set directory KIND/data, as input_0.pb and output_0.pb: a FIFO; a
	// symbolic link to /dev/zero; a directory.
	kinds := []struct{ name, says string }{{"fifo", "named pipe"}, {"zero", "device"}, {"directory", "directory"}}
	for _, k := range kinds {
		for _, p := range []string{"x.pb", "data/input_0.pb", "data/output_0.pb"} {
			p = filepath.Join(dir, k.name, p)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			switch k.name {
			case "fifo":
				err = syscall.Mkfifo(p, 0o600)
			case "zero":
				err = os.Symlink("/dev/zero", p)
			default:
				err = os.Mkdir(p, 0o755)
			}
			if err != nil {
				t.Skipf("%s: %v", k.name, err)
			}
		}
	}
	ex, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	graph, payload, input := filepath.Join(ex, "mlp.ir.json"), filepath.Join(ex, "mlp.payload.json"), filepath.Join(ex, "mlp.input.json")
	model, data, err := writeFixture(filepath.Join(dir, "fixture"))
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(data, "input_0.pb")
	out := filepath.Join(dir, "out")
	// Each row names the file argument with BAD, which is replaced by each
	// special file in turn.
	rows := [][]string{
		{"import", "--onnx", "BAD", "--out", out},
		{"import", "--onnx", model, "--input", "BAD", "--out", out},
		{"eval", "--graph", "BAD", "--payload", payload, "--input", input},
		{"eval", "--graph", graph, "--payload", "BAD", "--input", input},
		{"eval", "--graph", graph, "--payload", payload, "--input", "BAD"},
		{"eval", "--onnx", "BAD", "--input", pb},
		{"eval", "--onnx", model, "--input", "BAD"},
		{"grad", "--onnx", "BAD", "--input", pb},
		{"grad", "--graph", graph, "--payload", payload, "--input", "BAD"},
		{"diff", "--graph", "BAD", "--payload", payload, "--input", input},
		{"plan", "--graph", "BAD", "--payload", payload},
		{"plan", "--onnx", model, "--input", "BAD"},
		{"compare", "--onnx", "BAD", "--data", data},
		{"compare", "--onnx", model, "--data", "BADDATA"},
		{"compare-grad", "--onnx", "BAD", "--input", pb, "--grads", pb},
		{"compare-grad", "--onnx", model, "--input", "BAD", "--grads", pb},
		{"compare-grad", "--onnx", model, "--input", pb, "--grads", "BAD"},
		{"compare-grad", "--onnx", model, "--input", pb, "--grads", "BAD", "--grads", "BAD"},
		{"certify", "--graph", "BAD", "--payload", payload, "--input", input, "--out", out},
		{"certify", "--graph", graph, "--payload", payload, "--input", "BAD", "--out", out},
		{"certify", "--onnx", "BAD", "--input", pb, "--out", out},
		{"view", "--graph", "BAD", "--out", filepath.Join(dir, "v.html")},
		{"view", "--onnx", "BAD", "--out", filepath.Join(dir, "v.html")},
		{"view", "--graph", graph, "--payload", payload, "--input", "BAD", "--what", "grads", "--out", filepath.Join(dir, "v.html")},
		{"lean", "audit", "--export", "BAD"},
		{"verify", "BAD"},
		{"verify", "--onnx", "BAD", "--input", pb, out},
		{"verify", "--onnx", model, "--input", "BAD", out},
		{"verify", "--graph", graph, "--payload", "BAD", "--input", input, out},
		{"merge", filepath.Join(dir, "merged"), "BAD"},
	}
	for _, k := range kinds {
		bad, badData := filepath.Join(dir, k.name, "x.pb"), filepath.Join(dir, k.name, "data")
		for _, row := range rows {
			args := make([]string, len(row))
			for i, a := range row {
				a = strings.ReplaceAll(a, "BADDATA", badData)
				args[i] = strings.ReplaceAll(a, "BAD", bad)
			}
			says := k.says
			if k.name == "zero" && slices.Contains(row, "BADDATA") {
				says = "out of the directory" // a data set's entry must resolve inside it (safeio.StatIn)
			}
			if row[0] == "verify" && len(row) == 2 || row[0] == "merge" {
				if k.name == "directory" {
					continue // a directory is what these read: certificates' tests cover hostile ones
				}
				says = "not a directory"
			}
			name := k.name + ": " + strings.Join(row, " ")
			checkHostile(t, name, runHostile(t, dir, args...), 2, says)
			os.RemoveAll(out)
		}
	}
}

// TestHostileContents: files of every kind a command reads, made hostile
// — truncated, claiming huge sizes, nested deeply, not UTF-8, with
// duplicate keys — are refused with one line, exit 2, within the wall
// and memory bounds of the table (checkHostile), at the default limits.
func TestHostileContents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tlcheck as ~40 processes")
	}
	dir := t.TempDir()
	ex, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	graph, payload, input := filepath.Join(ex, "mlp.ir.json"), filepath.Join(ex, "mlp.payload.json"), filepath.Join(ex, "mlp.input.json")
	model, data, err := writeFixture(filepath.Join(dir, "fixture"))
	if err != nil {
		t.Fatal(err)
	}
	pb := filepath.Join(data, "input_0.pb")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	g, pl, in, m := read(graph), read(payload), read(input), read(model)
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	huge := tensorPB("w", []int64{1<<26 - 1<<16}, 1) // claims 2^26−2^16 floats, holds one
	hugeModel := string(pbuf(nil).varint(1, 8).bytes(7, pbuf(nil).
		bytes(1, nodePB("k", "Constant", nil, "c")).
		str(2, "huge").bytes(5, huge).
		bytes(11, valueInfoPB("x", 2)).bytes(12, valueInfoPB("c", 2))).bytes(8, pbuf(nil).varint(2, 13)))
	grads := `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[1,2]}}}`
	lean := "{\"meta\":{}}\n"
	// Protobuf's counterparts of the JSON hostilities (the ONNX reader's
	// documented refusals, onnx/model.go): a second graph (an embedded
	// message given twice: not merged, refused), a tensor's data given
	// both as float_data and raw_data; names that are not UTF-8; an unknown
	// field of group type nested 10^5 deep (skipped within protowire's
	// recursion limit, never descended by a recursive decoder).
	fixture := fixtureModel()
	graphOf := func(model []byte) []byte { // the fixture's field 7
		for b := model; len(b) > 0; {
			num, typ, n := protowire.ConsumeTag(b)
			b = b[n:]
			m := protowire.ConsumeFieldValue(num, typ, b)
			if num == 7 {
				v, _ := protowire.ConsumeBytes(b)
				return v
			}
			b = b[m:]
		}
		t.Fatal("fixture: no graph")
		return nil
	}
	group := func(depth int) []byte {
		var b []byte
		for range depth {
			b = protowire.AppendTag(b, 99, protowire.StartGroupType)
		}
		for range depth {
			b = protowire.AppendTag(b, 99, protowire.EndGroupType)
		}
		return b
	}
	twoGraphs := string(pbuf(fixture).bytes(7, graphOf(fixture)))
	badName := strings.Replace(string(fixture), "scale", "sc\xffle", 1)
	deepModel := string(append(bytes.Clone(fixture), group(100000)...))
	tensor := tensorPB("x", []int64{2}, 1.5, 2)
	twiceData := string(pbuf(bytes.Clone(tensor)).bytes(9, make([]byte, 8)))
	badTensorName := string(tensorPB("\xff", []int64{2}, 1.5, 2))
	deepTensor := string(append(bytes.Clone(tensor), group(100000)...))
	hugeLean := lean + `{"in":4611686018427387904,"str":{"pre":0,"str":"x"}}` + "\n"
	type row struct {
		what string
		args []string
	}
	var rows []row
	add := func(what string, args ...string) { rows = append(rows, row{what, args}) }
	for _, h := range []struct{ name, graph, payload, input string }{
		{"truncated", g[:len(g)/2], pl[:len(pl)/2], in[:len(in)/2]},
		{"duplicate key", `{"format":"torchlean.ir.v1","format":"tlcheck.ir.v1"` + g[strings.Index(g, ",")+0:], `{"format":"tlcheck.payload.v1","format":"tlcheck.payload.v1","params":[]}`, `{"shape":[2],"shape":[2],"values":["1","2"]}`},
		{"non-UTF-8", strings.Replace(g, "torchlean", "torch\xfflean", 1), strings.Replace(pl, "tlcheck", "tl\xffcheck", 1), "{\"shape\":[1],\"values\":[\"\xff\"]}"},
		{"deep nesting", `{"format":"torchlean.ir.v1","nodes":` + deep + `}`, `{"format":"tlcheck.payload.v1","params":` + deep + `}`, `{"shape":[1],"values":` + deep + `}`},
		{"huge claimed size", `{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[1099511627776]}]}`, pl, `{"shape":[1099511627776],"values":[]}`},
	} {
		gp, pp, ip := write(h.name+".graph.json", h.graph), write(h.name+".payload.json", h.payload), write(h.name+".input.json", h.input)
		add(h.name+" graph", "eval", "--graph", gp, "--payload", payload, "--input", input)
		if h.name != "huge claimed size" {
			add(h.name+" payload", "eval", "--graph", graph, "--payload", pp, "--input", input)
		}
		add(h.name+" tensor JSON", "eval", "--graph", graph, "--payload", payload, "--input", ip)
		add(h.name+" graph (certify)", "certify", "--graph", gp, "--payload", payload, "--input", input, "--out", filepath.Join(dir, "out"))
		add(h.name+" graph (view)", "view", "--graph", gp, "--out", filepath.Join(dir, "v.html"))
	}
	for _, h := range []struct{ name, model, tensor, grads, lean string }{
		{"truncated", m[:len(m)/2], string(tensorPB("x", []int64{2}, 1.5, 2)[:5]), grads[:len(grads)/2], lean[:5]},
		{"huge claimed size", hugeModel, string(huge), `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[1099511627776],"values":[]}}}`, hugeLean},
		{"duplicate key", twoGraphs, twiceData, `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[1,2]},"x":{"shape":[2],"values":[1,2]}}}`, "{\"meta\":{},\"meta\":{}}\n"},
		{"non-UTF-8", badName, badTensorName, "{\"format\":\"tlcheck.grads.v1\",\"grads\":{\"\xff\":{\"shape\":[2],\"values\":[1,2]}}}", "{\"meta\":\"\xff\"}\n"},
		{"deep nesting", deepModel, deepTensor, `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":` + deep + `}}}`, `{"meta":` + deep + "}\n"},
	} {
		if h.model != "" {
			mp := write(h.name+".onnx", h.model)
			add(h.name+" ONNX model", "import", "--onnx", mp, "--out", filepath.Join(dir, "imp"))
			add(h.name+" ONNX model (eval)", "eval", "--onnx", mp, "--input", pb)
			add(h.name+" ONNX model (view)", "view", "--onnx", mp, "--out", filepath.Join(dir, "v.html"))
		}
		if h.tensor != "" {
			tp := write(h.name+".pb", h.tensor)
			add(h.name+" TensorProto", "eval", "--onnx", model, "--input", tp)
		}
		gp := write(h.name+".grads.json", h.grads)
		add(h.name+" gradients JSON", "compare-grad", "--onnx", model, "--input", pb, "--grads", gp)
		if h.lean != "" {
			add(h.name+" lean4export", "lean", "audit", "--export", write(h.name+".ndjson", h.lean))
		}
	}
	for _, r := range rows {
		checkHostile(t, r.what+": "+strings.Join(r.args[:1], " "), runHostile(t, dir, r.args...), 2, "")
		os.RemoveAll(filepath.Join(dir, "out"))
		os.RemoveAll(filepath.Join(dir, "imp"))
	}
}
