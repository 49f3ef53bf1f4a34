package fastcpu

import (
	"sync"
	"sync/atomic"
)

// helperTask is a job that helper goroutines can join: runHelper does
// the job's share of work that the helper manages to claim and then calls
// Done on the job's WaitGroup, as its last access to the job.
type helperTask interface {
	runHelper()
}

// Helper goroutines park on idle between calls, so that a parallel call
// starts no goroutine, and allocates nothing, once enough helpers exist.
// Work inside a job is claimed through atomic counters, so how many
// helpers join, and which, never changes a result.
var (
	idle    = make(chan helperTask)
	helpers atomic.Int32
)

// maxHelpers bounds the helper goroutines ever started.
const maxHelpers = 256

// dispatch hands t to up to n helpers, parked ones first, then new ones
// while fewer than maxHelpers exist, adding one to wg for each. A share
// that no helper takes is simply done by the caller.
func dispatch(t helperTask, wg *sync.WaitGroup, n int) {
	for range n {
		wg.Add(1)
		select {
		case idle <- t:
			continue
		default:
		}
		if helpers.Add(1) <= maxHelpers {
			go helper(t)
			continue
		}
		helpers.Add(-1)
		wg.Done()
		return
	}
}

// helper runs tasks forever, parking on idle between them.
func helper(t helperTask) {
	for {
		t.runHelper()
		t = <-idle
	}
}
