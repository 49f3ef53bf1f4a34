package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// bnFixture writes a one-node batch norm model, y = x / sqrt(1 + eps)
// per channel (γ = 1, β = 0, mean 0, var 1), at x = (11/10, −11/5), with
// the given eps: eps = 21/100 keeps it rational (sqrt(121/100) = 11/10,
// y = (1, −2), by hand); eps = 1/100 does not (sqrt(101/100) is
// irrational), which is the case --scalar auto must answer with intervals.
func bnFixture(t *testing.T, eps string) (graph, payload, input string) {
	t.Helper()
	dir := t.TempDir()
	graph = writeTemp(t, dir, "bn.ir.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2]},
  {"id":1,"kind":"batch_norm_eval","parents":[0],"shape":[1,2],"channel_axis":1,"channels":2}
]}`)
	payload = writeTemp(t, dir, "bn.payload.json", `{"format":"tlcheck.payload.v1","entries":{
  "1":{"gamma":{"shape":[2],"values":["1","1"]},"beta":{"shape":[2],"values":["0","0"]},"mean":{"shape":[2],"values":["0","0"]},"var":{"shape":[2],"values":["1","1"]},"eps":"`+eps+`"}
}}`)
	input = writeTemp(t, dir, "bn.x.json", `{"shape":[1,2],"values":["11/10","-11/5"]}`)
	return graph, payload, input
}

// TestScalarAutoDefault: eval, grad and view default to --scalar auto;
// rat where the model stays rational, interval where a batch norm's sqrt
// leaves the rationals, the choice and its reason printed.
func TestScalarAutoDefault(t *testing.T) {
	g, p, x := bnFixture(t, "21/100")
	code, out, errs := runCmd("eval", "--graph", g, "--payload", p, "--input", x)
	if want := "scalar = rat (exact rationals)\noutput node 1 (batch_norm_eval) [1,2] = [[1, -2]]\n"; code != 0 || out != want {
		t.Errorf("eval, eps 21/100: exit %d, %q (stderr %q), want %q", code, out, errs, want)
	}
	g, p, x = bnFixture(t, "1/100")
	code, out, errs = runCmd("eval", "--graph", g, "--payload", p, "--input", x)
	first, _, _ := strings.Cut(out, "\n")
	if code != 0 || !strings.HasPrefix(first, "scalar = interval (") || !strings.Contains(first, "not rat: node 1 (batch_norm_eval)") || !strings.Contains(first, "101/100") {
		t.Errorf("eval, eps 1/100: exit %d, first line %q (stderr %q)", code, first, errs)
	}
	// --scalar rat is still refused there, naming the node.
	if code, _, errs := runCmd("eval", "--graph", g, "--payload", p, "--input", x, "--scalar", "rat"); code != 2 || !strings.Contains(errs, "no exact rational square root") {
		t.Errorf("eval --scalar rat, eps 1/100: exit %d, %q; want exit 2", code, errs)
	}
	// The JSON says interval, and each interval encloses the exact
	// y_i = x_i / sqrt(101/100): lo² ≤ x_i²·100/101 ≤ hi² for y > 0, and
	// mirrored for y < 0 — checked in exact arithmetic.
	code, out, errs = runCmd("eval", "--graph", g, "--payload", p, "--input", x, "--json")
	var doc struct {
		Scalar string `json:"scalar"`
		Output struct {
			Value struct {
				Values []struct{ Lo, Hi float64 } `json:"values"`
			} `json:"value"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc.Scalar != "interval" || len(doc.Output.Value.Values) != 2 {
		t.Fatalf("eval --json: exit %d, %v, %q (stderr %q)", code, err, out, errs)
	}
	for i, xi := range []*big.Rat{big.NewRat(11, 10), big.NewRat(-11, 5)} {
		sq := new(big.Rat).Mul(xi, xi)
		sq.Mul(sq, big.NewRat(100, 101))
		iv := doc.Output.Value.Values[i]
		lo, hi := new(big.Rat).SetFloat64(iv.Lo), new(big.Rat).SetFloat64(iv.Hi)
		if xi.Sign() < 0 {
			lo, hi = hi.Neg(hi), lo.Neg(lo)
		}
		if lo.Sign() <= 0 || new(big.Rat).Mul(lo, lo).Cmp(sq) > 0 || new(big.Rat).Mul(hi, hi).Cmp(sq) < 0 {
			t.Errorf("element %d: [%v, %v] does not enclose x/sqrt(101/100)", i, iv.Lo, iv.Hi)
		}
	}
	code, out, errs = runCmd("grad", "--graph", g, "--payload", p, "--input", x)
	if code != 0 || !strings.HasPrefix(out, "scalar = interval (") {
		t.Errorf("grad: exit %d, %q (stderr %q)", code, out, errs)
	}
	page := filepath.Join(t.TempDir(), "v.html")
	if code, _, errs := runCmd("view", "--graph", g, "--payload", p, "--input", x, "--what", "grads", "--out", page); code != 0 {
		t.Fatalf("view: exit %d, %q", code, errs)
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "scalar = interval (") {
		t.Errorf("view --what grads: the page does not say the scalar auto chose")
	}
}

// TestCertifyModelNotExact: a model whose composition cannot be certified
// over the rationals (a batch norm's sqrt) is certified with the interval
// enclosure of its output in place of model_composition, exit 0, a line
// saying so, and verify passes on the directory and fails (exit 1) on it
// with one bound edited. Certify never skips a certificate silently: a
// model whose range certificate cannot be written (an input beyond
// binary32) is refused without --partial, exit 1, nothing written; with
// --partial the rest is written and the missing kind listed.
func TestCertifyModelNotExact(t *testing.T) {
	g, p, x := bnFixture(t, "1/100")
	out := filepath.Join(t.TempDir(), "certs")
	code, so, errs := runCmd("certify", "--graph", g, "--payload", p, "--input", x, "--out", out)
	if code != 0 || !strings.HasPrefix(so, "certified: model_interval in place of model_composition: not exact over rat: ") || strings.Contains(so, "not certified") {
		t.Fatalf("certify: exit %d, stdout %q, stderr %q; want exit 0 with model_interval in place of model_composition", code, so, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "model_composition.json")); !os.IsNotExist(err) {
		t.Errorf("certify wrote a model_composition.json for a model not exact over the rationals")
	}
	if code, so, errs := runCmd("verify", out); code != 0 || !regexp.MustCompile(`(?m)^ok +model_interval +model_interval\.json +2 cases$`).MatchString(so) {
		t.Errorf("verify: exit %d %q %q", code, so, errs)
	}
	// Beside --json the line goes to stderr and stdout is the document.
	code, so, errs = runCmd("certify", "--graph", g, "--payload", p, "--input", x, "--out", filepath.Join(t.TempDir(), "j"), "--json")
	var doc struct {
		Files []struct {
			Path, Kind string
		} `json:"files"`
	}
	if err := json.Unmarshal([]byte(so), &doc); code != 0 || err != nil || !strings.HasPrefix(errs, "certified: model_interval in place of model_composition: ") {
		t.Errorf("certify --json: exit %d (%v), stderr %q", code, err, errs)
	}
	kinds := map[string]bool{}
	for _, f := range doc.Files {
		kinds[f.Kind] = true
	}
	if !kinds["model_interval"] || kinds["model_composition"] {
		t.Errorf("certify --json lists %v", doc.Files)
	}
	// One bound moved up by one ulp, the manifest's hash recomputed: only
	// the interval verifier can catch it.
	file := filepath.Join(out, "model_interval.json")
	old, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(old, []byte(`"lo": "0x`))
	if i < 0 {
		t.Fatalf("no lo bound in %s", old)
	}
	i += len(`"lo": "0x`)
	u, err := strconv.ParseUint(string(old[i:i+16]), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	mod := append([]byte{}, old...)
	copy(mod[i:], fmt.Sprintf("%016x", u+1))
	rehash(t, out, "model_interval.json", func([]byte) []byte { return mod })
	if code, so, errs := runCmd("verify", out); code != 1 || !strings.Contains(so, "model_interval.json: field output.values[0]: element (0, 0)") || !strings.Contains(errs, "1 of ") {
		t.Errorf("verify of an edited bound: exit %d %q %q; want exit 1 naming output.values[0]", code, so, errs)
	}
	// An input beyond binary32 has no range certificate: refused whole
	// without --partial.
	big := writeTemp(t, t.TempDir(), "big.json", `{"shape":[1,2],"values":["10000000000000000000000000000000000000000","1"]}`)
	out = filepath.Join(t.TempDir(), "certs")
	code, so, errs = runCmd("certify", "--graph", g, "--payload", p, "--input", big, "--out", out)
	if code != 1 || so != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "not certified: model_range") || !strings.Contains(errs, "nothing written") {
		t.Errorf("certify: exit %d, stdout %q, stderr %q; want exit 1 naming model_range", code, so, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("certify refused the model but %s exists (%v)", out, err)
	}
	code, so, errs = runCmd("certify", "--graph", g, "--payload", p, "--input", big, "--out", out, "--partial")
	if code != 0 || !strings.Contains(so, "not certified: model_range: ") {
		t.Fatalf("certify --partial: exit %d, stdout %q, stderr %q", code, so, errs)
	}
	if _, err := os.Stat(filepath.Join(out, "model_range.json")); !os.IsNotExist(err) {
		t.Errorf("certify --partial wrote a model_range.json it said it could not certify")
	}
	if code, so, errs := runCmd("verify", out); code != 0 {
		t.Errorf("verify of the partial directory: exit %d %q %q", code, so, errs)
	}
	// The rational model is certified whole, with or without --partial.
	g, p, x = bnFixture(t, "21/100")
	whole := filepath.Join(t.TempDir(), "whole")
	if code, so, errs := runCmd("certify", "--graph", g, "--payload", p, "--input", x, "--out", whole); code != 0 || strings.Contains(so, "certified: ") {
		t.Errorf("certify of the rational model: exit %d %q %q", code, so, errs)
	}
	if _, err := os.Stat(filepath.Join(whole, "model_composition.json")); err != nil {
		t.Errorf("certify of the rational model wrote no model_composition.json: %v", err)
	}
	if code, _, errs := runCmd("certify", "--partial", "--out", filepath.Join(t.TempDir(), "x")); code != 2 || !strings.Contains(errs, "--partial goes with a model") {
		t.Errorf("certify --partial without a model: exit %d %q", code, errs)
	}
}
