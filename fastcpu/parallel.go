package fastcpu

import (
	"runtime"
	"sync/atomic"
	"time"
)

// helperTask is a job that helper goroutines can join: runHelper does the
// share of the job's work that the helper manages to claim and then
// decrements the job's pending counter, as its last access to the job.
type helperTask interface {
	runHelper()
}

// offer is embedded in every job. While a caller works on its own share,
// the offer is published so that spinning helpers can take a seat at once
// and the caller never blocks: handing a job to a parked goroutine, or
// parking the caller until helpers finish, costs a thread wake-up, which
// on a small VM takes about as long as a whole 256³ product. Work inside a
// job is claimed through atomic counters, so how many helpers join, and
// which, never changes a result.
type offer struct {
	task    helperTask
	seats   atomic.Int32 // seats left; retired (very negative) once withdrawn
	pending atomic.Int32 // helpers that joined or may still join, not yet done
}

const retired = -1 << 30

var (
	current  atomic.Pointer[offer] // the published offer, if any
	spinning atomic.Int32          // helpers polling current
	idle     = make(chan helperTask)
	helpers  atomic.Int32
)

const (
	// maxHelpers bounds the helper goroutines ever started.
	maxHelpers = 256
	// spinFor is how long a helper polls for a new offer after finishing
	// a job before it parks on idle.
	spinFor = 200 * time.Microsecond
)

// dispatch asks for n helpers for o.task: spinning helpers through the
// published offer, then parked helpers, then new ones while fewer than
// maxHelpers exist. o.pending counts every helper that may join. The
// caller must call finish(o) after doing its own share.
func dispatch(o *offer, n int) {
	o.seats.Store(retired)
	o.pending.Store(0)
	if s := int(spinning.Load()); s > 0 {
		k := min(n, s)
		o.pending.Add(int32(k))
		o.seats.Store(int32(k))
		if current.CompareAndSwap(nil, o) {
			n -= k
		} else { // another caller's offer is up; take the seats back
			withdraw(o)
		}
	}
	for range n {
		o.pending.Add(1)
		select {
		case idle <- o.task:
			continue
		default:
		}
		if helpers.Add(1) <= maxHelpers {
			go helper(o.task)
			continue
		}
		helpers.Add(-1)
		o.pending.Add(-1)
		return
	}
}

// withdraw unpublishes o and releases the seats nobody took.
func withdraw(o *offer) {
	if r := o.seats.Swap(retired); r > 0 {
		o.pending.Add(-r)
	}
	current.CompareAndSwap(o, nil)
}

// finish withdraws o and waits until every helper that joined is done.
func finish(o *offer) {
	withdraw(o)
	spinUntil(func() bool { return o.pending.Load() == 0 })
}

// spinUntil waits for cond by spinning and yielding its P rather than
// parking, so that the goroutine keeps its thread and is not left waiting
// for a wake-up; after about a millisecond it backs off to short sleeps.
func spinUntil(cond func() bool) {
	for i := 0; !cond(); i++ {
		if i < 4096 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// done is a helper's last access to a job.
func (o *offer) done() { o.pending.Add(-1) }

// take claims a seat in the published offer, if there is one.
func take() helperTask {
	o := current.Load()
	if o == nil || o.seats.Load() <= 0 {
		return nil
	}
	if s := o.seats.Add(-1); s >= 0 {
		if s == 0 {
			current.CompareAndSwap(o, nil)
		}
		return o.task
	}
	return nil
}

// helper runs tasks forever: after each one it polls for an offer for
// spinFor, yielding its P now and then, then parks on idle.
func helper(t helperTask) {
	for {
		t.runHelper()
		t = nil
		spinning.Add(1)
		start := time.Now()
		for i := 1; ; i++ {
			if t = take(); t != nil {
				break
			}
			if i%256 == 0 {
				if time.Since(start) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
		spinning.Add(-1)
		if t == nil {
			t = <-idle
		}
	}
}
