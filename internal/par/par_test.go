package par

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestMapOrderAndStep(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 1}, {1, 1}, {7, 1}, {7, 2}, {100, 8}, {3, 16}, {50, 0}} {
		steps := 0
		got := Map(tc.n, tc.workers, func(i int) int { return i * i }, func() { steps++ })
		if len(got) != tc.n {
			t.Fatalf("n=%d workers=%d: %d results", tc.n, tc.workers, len(got))
		}
		for i, v := range got {
			if v != i*i {
				t.Errorf("n=%d workers=%d: result %d = %d, want %d", tc.n, tc.workers, i, v, i*i)
			}
		}
		if steps != tc.n {
			t.Errorf("n=%d workers=%d: step called %d times", tc.n, tc.workers, steps)
		}
	}
}

// The error reported is that of the smallest failing index, whatever the
// worker count and completion order; every index below it ran.
func TestMapErrFirstInIndexOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 8} {
		ran := make([]bool, 200)
		_, err := MapErr(200, workers, func(i int) (int, error) {
			ran[i] = true
			if i%37 == 36 || i == 150 { // fails at 36, 73, 110, 147, 150, 184
				return 0, fmt.Errorf("bad %d", i)
			}
			return i, nil
		}, nil)
		if err == nil || err.Error() != "bad 36" {
			t.Fatalf("workers=%d: err = %v, want bad 36", workers, err)
		}
		for i := 0; i < 36; i++ {
			if !ran[i] {
				t.Errorf("workers=%d: index %d below the failure did not run", workers, i)
			}
		}
	}
	if _, err := MapErr(5, 2, func(i int) (int, error) { return i, nil }, nil); err != nil {
		t.Fatal(err)
	}
	sentinel := errors.New("last")
	if _, err := MapErr(5, 3, func(i int) (int, error) {
		if i == 4 {
			return 0, sentinel
		}
		return i, nil
	}, nil); !errors.Is(err, sentinel) {
		t.Fatalf("err = %v", err)
	}
}

// step is never called concurrently, even when many workers finish at
// once: a step that notices another one running fails the test.
func TestStepSerialized(t *testing.T) {
	var active, overlaps, steps atomic.Int32
	Map(64, 8, func(i int) int { return i }, func() {
		if active.Add(1) != 1 {
			overlaps.Add(1)
		}
		time.Sleep(50 * time.Microsecond)
		steps.Add(1)
		active.Add(-1)
	})
	if overlaps.Load() != 0 || steps.Load() != 64 {
		t.Fatalf("%d overlapping steps, %d steps", overlaps.Load(), steps.Load())
	}
}

// For visits every index exactly once, in chunks whose bounds depend on n
// and grain only, for any worker count.
func TestForChunks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, tc := range []struct{ n, grain int }{{0, 4}, {1, 4}, {7, 0}, {7, 3}, {100, 7}, {64, 64}, {1000, 1}} {
			hits := make([]atomic.Int32, tc.n)
			var bad atomic.Int32
			g := max(tc.grain, 1)
			For(tc.n, tc.grain, func(lo, hi int) {
				if procs > 1 && (lo%g != 0 || (hi != tc.n && hi-lo != g)) {
					bad.Add(1)
				}
				for i := lo; i < hi; i++ {
					hits[i].Add(1)
				}
			})
			for i := range hits {
				if h := hits[i].Load(); h != 1 {
					t.Fatalf("procs=%d n=%d grain=%d: index %d visited %d times", procs, tc.n, tc.grain, i, h)
				}
			}
			if bad.Load() != 0 {
				t.Errorf("procs=%d n=%d grain=%d: %d chunks off the fixed grid", procs, tc.n, tc.grain, bad.Load())
			}
		}
	}
}
