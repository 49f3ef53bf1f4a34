// Package par runs independent, indexed pieces of work on a bounded pool
// of goroutines and returns their results in index order, so that a
// caller which merges them in that order produces the same output for any
// number of workers.
//
// Determinism argument: f(i) is called exactly once for every index that
// matters, and result i is stored at position i of the result slice; the
// caller sees the slice only after every worker has finished. The result
// therefore depends only on f and n, not on scheduling or on the worker
// count, provided each f(i) is itself a function of i alone (no shared
// mutable state). MapErr reports the error of the smallest failing index,
// which is the error a sequential loop stopping at its first failure
// would report: every index below it runs to completion; indices above it
// may be skipped.
//
// For is the same idea inside one kernel: the index range cut into fixed
// chunks, each claimed by one goroutine, each index's output written by
// its own chunk only, so a kernel whose elements are independent (every
// output element its own fold in its own order) gives the same bits for
// any worker count. spec's window kernels use it (spec.parRows); fastcpu
// keeps its own spinning helpers (package fastcpu, parallel.go) because
// a product of a few microseconds cannot afford a goroutine start.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers is the default pool size: runtime.GOMAXPROCS(0).
func Workers() int { return runtime.GOMAXPROCS(0) }

// Map calls f(i) for every i in [0, n) on at most workers goroutines
// (workers < 1 means Workers()) and returns the results with result i at
// index i. step, if not nil, is called once after each f(i) returns,
// never concurrently with itself (a progress bar need not be
// goroutine-safe).
func Map[R any](n, workers int, f func(i int) R, step func()) []R {
	out, _ := MapErr(n, workers, func(i int) (R, error) { return f(i), nil }, step)
	return out
}

// MapErr is Map for work that can fail. It returns the results and the
// error of the smallest index whose f failed (nil if none did). Once some
// index has failed, indices above it are not started; results at and
// above the failing index are unspecified.
func MapErr[R any](n, workers int, f func(i int) (R, error), step func()) ([]R, error) {
	out := make([]R, max(n, 0))
	if n <= 0 {
		return out, nil
	}
	if workers < 1 {
		workers = Workers()
	}
	workers = min(workers, n)
	errs := make([]error, n)
	var next atomic.Int64
	var firstFail atomic.Int64
	firstFail.Store(int64(n))
	var stepMu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || int64(i) > firstFail.Load() {
					return
				}
				r, err := f(i)
				out[i], errs[i] = r, err
				if err != nil {
					for {
						cur := firstFail.Load()
						if int64(i) >= cur || firstFail.CompareAndSwap(cur, int64(i)) {
							break
						}
					}
				}
				if step != nil {
					stepMu.Lock()
					step()
					stepMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if k := firstFail.Load(); k < int64(n) {
		return out, errs[k]
	}
	return out, nil
}

// For runs body over [0, n) split into the fixed chunks [c·grain,
// min(n, (c+1)·grain)) on at most Workers() goroutines (the caller's
// included), chunks claimed through an atomic counter, and returns when
// every chunk is done. The chunks do not depend on the worker count, and
// each index lies in exactly one chunk, so a body that writes only the
// elements of its own indices, as a function of those indices and of
// data that no chunk writes, leaves the same result for any GOMAXPROCS
// and any schedule; a reduction must be stored per index (or per chunk)
// and combined by the caller in index order. With one worker, or a single
// chunk, body runs on the calling goroutine. grain < 1 means 1.
func For(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := (n + grain - 1) / grain
	workers := min(Workers(), chunks)
	if workers <= 1 {
		body(0, n)
		return
	}
	var next atomic.Int64
	run := func() {
		for {
			c := int(next.Add(1) - 1)
			if c >= chunks {
				return
			}
			body(c*grain, min(n, (c+1)*grain))
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	run()
	wg.Wait()
}
