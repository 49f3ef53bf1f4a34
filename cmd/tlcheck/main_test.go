package main

import (
	"bytes"
	"strings"
	"testing"
)

func runCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	cases := []struct {
		args    []string
		code    int
		inOut   string
		inErr   string
		oneLine bool
	}{
		{[]string{"help"}, 0, "tape-example", "", false},
		{[]string{"version"}, 0, "tlcheck 0.", "", false},
		{[]string{"help", "version"}, 0, "usage: tlcheck version\n", "", false},
		{[]string{"frob"}, 2, "", `unknown command "frob"`, true},
		{[]string{"help", "frob"}, 2, "", `unknown command "frob"`, true},
		{[]string{"version", "--nope"}, 2, "", "version: unknown flag --nope (run 'tlcheck help version')", true},
		{[]string{"version", "extra"}, 2, "", `unexpected argument "extra"`, true},
		{[]string{"tape-example"}, 0, "grad x = [12, -6]", "", false},
		{[]string{"tape-example", "--detach"}, 0, "grad x = [6, -3]", "", false},
		{[]string{"tape-example", "--scalar", "f64"}, 0, "loss = 22.5", "", false},
		{[]string{"check", "--cases", "5"}, 0, "obligations hold on", "", false},
		{[]string{"check", "--ops", "mul,tanh", "--cases", "20", "--plant-fault", "mul"}, 1, "replay: tlcheck check --ops mul", "obligations fail", true},
		{[]string{"check", "--ops", "frob"}, 2, "", `unknown primitive "frob"`, true},
		{[]string{"check", "--cases", "0"}, 2, "", "--cases must be between", true},
		{[]string{"check", "--seed", "x"}, 2, "", "tlcheck: --seed: not an integer: x\n", true},
		{[]string{"check", "--ops", ""}, 2, "", "tlcheck: --ops: empty value", true},
		{[]string{"check", "--graph-obligations", ""}, 2, "", "tlcheck: --graph-obligations: empty value", true},
		{[]string{"certify", "--out", "unused", "--providers", ""}, 2, "", "tlcheck: --providers: empty value", true},
		{[]string{"diff", "--scalars", ""}, 2, "", "tlcheck: --scalars: empty value", true},
		// mul has seven obligations (adjointness, JVP and VJP linearity, zero
		// preservation, derivative over Dual[Rat], fast-path, interval
		// enclosure); the planted fault flips the VJP over Rat, Interval and
		// F64, so adjointness and fast-path fail.
		{[]string{"check", "--ops", "mul", "--cases", "20", "--graphs", "0", "--plant-fault", "mul"}, 1, "", "tlcheck: 2 of 7 obligations fail\n", true},
		{[]string{"check", "--ops", "mul", "--cases", "1", "--graphs", "0"}, 0, "all 7 obligations hold on 1 primitive × 1 case and 0 random graphs per graph obligation\n", "", false},
		{[]string{"tape-example", "--scalar", "q"}, 2, "", `--scalar: unknown value "q"`, true},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, errs)
		}
		if !strings.Contains(out, c.inOut) {
			t.Errorf("%v: stdout %q lacks %q", c.args, out, c.inOut)
		}
		if !strings.Contains(errs, c.inErr) {
			t.Errorf("%v: stderr %q lacks %q", c.args, errs, c.inErr)
		}
		if c.oneLine && strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: stderr should be one line, got %q", c.args, errs)
		}
	}
}
