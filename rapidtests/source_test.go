package rapidtests

import (
	"fmt"
	"strings"
	"sync"

	"pgregory.net/rapid"
)

// source adapts a rapid.T to casegen.Source: every choice is a rapid
// draw, so rapid can shrink it toward 0 (the simplest choice).
type source struct{ t *rapid.T }

func (s source) Intn(n int, label string) int {
	if n <= 1 {
		return 0
	}
	return rapid.IntRange(0, n-1).Draw(s.t, label)
}

// captureTB is a rapid.TB that records failures instead of failing the
// enclosing test: the planted-fault self-tests use it to assert that a
// property *does* fail on a deliberately wrong rule, and to inspect the
// shrunk counterexample.
type captureTB struct {
	mu     sync.Mutex
	name   string
	failed bool
	logs   []string
}

func (c *captureTB) Helper()      {}
func (c *captureTB) Name() string { return c.name }
func (c *captureTB) Logf(f string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logs = append(c.logs, fmt.Sprintf(f, a...))
}
func (c *captureTB) Log(a ...any)             { c.Logf("%s", fmt.Sprint(a...)) }
func (c *captureTB) Skipf(f string, a ...any) { c.Logf(f, a...); c.SkipNow() }
func (c *captureTB) Skip(a ...any)            { c.Log(a...); c.SkipNow() }
func (c *captureTB) SkipNow()                 {}
func (c *captureTB) Errorf(f string, a ...any) {
	c.Logf(f, a...)
	c.Fail()
}
func (c *captureTB) Error(a ...any) { c.Log(a...); c.Fail() }
func (c *captureTB) Fatalf(f string, a ...any) {
	c.Logf(f, a...)
	c.Fail()
}
func (c *captureTB) Fatal(a ...any) { c.Log(a...); c.Fail() }
func (c *captureTB) FailNow()       { c.Fail() }
func (c *captureTB) Fail() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = true
}
func (c *captureTB) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

// output joins everything the check logged.
func (c *captureTB) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.logs, "\n")
}

// expectFailure runs prop under rapid with a capturing TB named name and
// returns whether it failed and what it printed (the shrunk case).
func expectFailure(name string, prop func(*rapid.T)) (bool, string) {
	c := &captureTB{name: name}
	rapid.Check(c, prop)
	return c.Failed(), c.output()
}
