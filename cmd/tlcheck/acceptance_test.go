package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// sharedONNX returns ../shared/onnx relative to the repository root (the
// first ancestor of the working directory that has shared/onnx), or ""
// when there is none.
func sharedONNX() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "..", "shared", "onnx")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// heavyInput is the size of input_0.pb beyond which a model is heavy.
const heavyInput = 256 << 10

// acceptanceModels lists the model directories of the acceptance set:
// every directory under pytorch-converted/ and simple/ that holds a
// model.onnx, sorted, less the heavy ones unless TLCHECK_ONNX_HEAVY=1.
// Under -short or the race detector it keeps every fourth, so that the
// subset still spans the op families.
func acceptanceModels(t *testing.T) []string {
	root := sharedONNX()
	if root == "" {
		t.Skip("../shared/onnx is absent: the ONNX acceptance set (pytorch-converted/, simple/) cannot run here")
	}
	var dirs []string
	for _, sub := range []string{"pytorch-converted", "simple"} {
		ents, err := os.ReadDir(filepath.Join(root, sub))
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		for _, e := range ents {
			d := filepath.Join(root, sub, e.Name())
			if _, err := os.Stat(filepath.Join(d, "model.onnx")); err == nil {
				dirs = append(dirs, d)
			}
		}
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatalf("%s holds no model directories", root)
	}
	// The two max pools of a million-element input take seconds each (the
	// rest of the set well under one together): they run when
	// TLCHECK_ONNX_HEAVY=1, and are named when skipped.
	if os.Getenv("TLCHECK_ONNX_HEAVY") != "1" {
		var light, heavy []string
		for _, d := range dirs {
			if st, err := os.Stat(filepath.Join(d, "test_data_set_0", "input_0.pb")); err == nil && st.Size() > heavyInput {
				heavy = append(heavy, filepath.Base(d))
				continue
			}
			light = append(light, d)
		}
		if len(heavy) > 0 {
			t.Logf("skipping %d models with an input over %d bytes (run them with TLCHECK_ONNX_HEAVY=1): %s", len(heavy), heavyInput, strings.Join(heavy, ", "))
		}
		dirs = light
	}
	if testing.Short() || raceEnabled {
		var sub []string
		for i := 0; i < len(dirs); i += 4 {
			sub = append(sub, dirs[i])
		}
		dirs = sub
	}
	return dirs
}

// TestONNXAcceptance is issue 11's acceptance: every model of
// ../shared/onnx/pytorch-converted/ and simple/ passes `tlcheck compare`
// on its recorded data set (run in-process: every recorded output element
// within the a-priori float32 bound, and the two Gradient models' outputs
// equal to tlcheck's exact gradients), and the exact gradient — over Rat
// where every tag is exact, Interval enclosures elsewhere — w.r.t. the
// input and every initializer is the same along the tape and the typed
// graph. The failure message lists every failing model.
func TestONNXAcceptance(t *testing.T) {
	dirs := acceptanceModels(t)
	var failed []string
	for _, d := range dirs {
		name := filepath.Base(d)
		data := filepath.Join(d, "test_data_set_0")
		code, out, errs := runCmd("compare", "--onnx", filepath.Join(d, "model.onnx"), "--data", data)
		if code != 0 || strings.Contains(out, "warning:") {
			failed = append(failed, fmt.Sprintf("%s: compare exit %d: %s", name, code, strings.TrimSpace(errs+lastLine(out))))
			continue
		}
		if err := gradPathsAgree(d); err != nil {
			failed = append(failed, fmt.Sprintf("%s: grad: %v", name, err))
		}
	}
	if len(failed) > 0 {
		t.Fatalf("%d of %d models fail:\n  %s", len(failed), len(dirs), strings.Join(failed, "\n  "))
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// gradPathsAgree differentiates the model at its recorded input along the
// tape and the typed graph and requires identical results: the same
// rationals, or the same interval endpoints bit for bit.
func gradPathsAgree(dir string) error {
	mf := &model.Spec{Cmd: "grad", ONNX: filepath.Join(dir, "model.onnx"), Data: filepath.Join(dir, "test_data_set_0")}
	files, err := mf.Load()
	if err != nil {
		return err
	}
	if files.RatApplies() {
		return agreeAs[spec.Rat](files)
	}
	return agreeAs[spec.Interval](files)
}

func agreeAs[T spec.Scalar[T]](files *model.Model) error {
	a, err := model.Grad[T](files, nil, irgrad.PathTape)
	if err != nil {
		return err
	}
	b, err := model.Grad[T](files, nil, irgrad.PathTypedGraph)
	if err != nil {
		return err
	}
	if !spec.SameTensor(a.Loss, b.Loss) {
		return fmt.Errorf("over %s the output differs between tape and typed graph", spec.KindOf[T]())
	}
	if !spec.SameTensor(a.Input, b.Input) {
		return fmt.Errorf("over %s the input's gradient differs between tape and typed graph", spec.KindOf[T]())
	}
	if len(a.Names) != len(b.Names) || len(a.Names) != len(files.ONNX.GradInits()) {
		return fmt.Errorf("over %s: %d and %d initializer gradients, the model has %d initializers with uses", spec.KindOf[T](), len(a.Names), len(b.Names), len(files.ONNX.GradInits()))
	}
	for i := range a.Names {
		if a.Names[i] != b.Names[i] || !spec.SameTensor(a.Params[i], b.Params[i]) {
			return fmt.Errorf("over %s the gradient of initializer %q differs between tape and typed graph", spec.KindOf[T](), a.Names[i])
		}
	}
	return nil
}
