package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{Failf("x"), ExitFailed},
		{fmt.Errorf("wrapped: %w", Failf("x")), ExitFailed},
		{Usagef("bad"), ExitBadUser},
		{errors.New("plain"), ExitBadUser},
		{BadInput(errors.New("b")), ExitBadUser},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if BadInput(nil) != nil {
		t.Fatal("BadInput(nil) must stay nil")
	}
}

func TestReportOneLine(t *testing.T) {
	var b bytes.Buffer
	Report(&b, errors.New("a\nb"))
	if b.String() != "tlcheck: a; b\n" {
		t.Fatalf("%q", b.String())
	}
	// A name from the input with a newline, an ESC sequence, a CR, NUL
	// and a right-to-left override prints escaped on one line.
	b.Reset()
	Report(&b, fmt.Errorf("node %s: bad", "n\n| accepted |\x1b[32mOK\x1b[0m\r\x00\u202e"))
	if want := `tlcheck: node n; | accepted |\x1b[32mOK\x1b[0m\r\x00\u202e: bad` + "\n"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
}

func TestParse(t *testing.T) {
	fs := NewFlags("x")
	n := fs.Int("n", 1, "")
	if err := Parse(fs, []string{"--n", "3"}, 0); err != nil || *n != 3 {
		t.Fatal(err)
	}
	if err := Parse(NewFlags("x"), []string{"extra"}, 0); Code(err) != ExitBadUser {
		t.Fatal("stray argument accepted")
	}
	for _, h := range []string{"-h", "-help", "--help", "--h"} {
		fs := NewFlags("x")
		var he *HelpError
		if err := Parse(fs, []string{h}, 0); !errors.As(err, &he) || he.Flags != fs {
			t.Errorf("%s: want a *HelpError carrying the flag set, got %v", h, err)
		}
	}
}

// TestProgressQuietOffTerminal: nothing is drawn when output is not a
// terminal.
func TestProgressQuietOffTerminal(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, "x", 10)
	for i := 0; i < 10; i++ {
		p.Step()
	}
	p.Done()
	if b.Len() != 0 {
		t.Fatalf("progress wrote %q to a non-terminal", b.String())
	}
}
