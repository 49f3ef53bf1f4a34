package rapidtests

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// handle is a model of a recorded reference: which session and which
// generation recorded it.
type handle struct {
	ref     tape.Ref
	session int
	gen     uint64
}

// TestSessionHandles discharges property 9: over a random sequence of
// record / reset / use operations on two sessions, a handle is accepted
// exactly when it belongs to the session and its current generation; a
// stale handle gets the stale-generation error and a foreign one the
// different-session error.
func TestSessionHandles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sessions := []*tape.Session[spec.Rat]{tape.NewSession[spec.Rat](nil), tape.NewSession[spec.Rat](nil)}
		var handles []handle
		x := spec.Vector(spec.NewRat(1, 2))
		t.Repeat(map[string]func(*rapid.T){
			"record": func(t *rapid.T) {
				s := rapid.IntRange(0, 1).Draw(t, "session")
				r, err := sessions[s].Param("p", x)
				if err != nil {
					t.Fatal(err)
				}
				handles = append(handles, handle{r, s, sessions[s].Generation()})
			},
			"reset": func(t *rapid.T) {
				s := rapid.IntRange(0, 1).Draw(t, "session")
				sessions[s].Reset()
			},
			"use": func(t *rapid.T) {
				if len(handles) == 0 {
					t.Skip("no handle yet")
				}
				h := handles[rapid.IntRange(0, len(handles)-1).Draw(t, "handle")]
				s := rapid.IntRange(0, 1).Draw(t, "session")
				_, err := sessions[s].Apply("neg", nil, h.ref)
				valid := h.session == s && h.gen == sessions[s].Generation()
				switch {
				case valid && err != nil:
					t.Fatalf("valid handle rejected: %v", err)
				case !valid && err == nil:
					t.Fatalf("handle from session %d generation %d accepted by session %d generation %d", h.session, h.gen, s, sessions[s].Generation())
				case !valid && h.session != s && !strings.Contains(err.Error(), "belongs to a different session"):
					t.Fatalf("foreign handle: wrong error %v", err)
				case !valid && h.session == s && !strings.Contains(err.Error(), "stale tensor reference"):
					t.Fatalf("stale handle: wrong error %v", err)
				}
			},
		})
	})
}

// TestPlantedSessionCheckCaught: a session model that ignored generations
// (accepting any handle of the right owner) is caught by the same state
// machine: the property fails.
func TestPlantedSessionCheckCaught(t *testing.T) {
	failed, out := expectPlanted("PlantedSessionCheck", nil)
	if !failed || !strings.Contains(out, "faulty check accepted a stale handle") {
		t.Fatalf("planted session fault not caught:\n%s", out)
	}
}

// plantedSessionProperty is the state machine of TestSessionHandles over a
// session model whose check accepts any handle of the right owner.
func plantedSessionProperty() func(*rapid.T) {
	return func(t *rapid.T) {
		s := tape.NewSession[spec.Rat](nil)
		r, _ := s.Param("p", spec.Vector(spec.NewRat(1, 1)))
		gen := s.Generation()
		t.Repeat(map[string]func(*rapid.T){
			"reset": func(t *rapid.T) { s.Reset() },
			"use": func(t *rapid.T) {
				// The planted fault: accept on owner alone.
				err := s.Check(r)
				acceptedByFault := err == nil || strings.Contains(err.Error(), "stale")
				valid := gen == s.Generation()
				if acceptedByFault != valid {
					t.Fatalf("faulty check accepted a stale handle (generation %d, current %d)", gen, s.Generation())
				}
			},
		})
	}
}
