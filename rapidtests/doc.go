// Package rapidtests holds the property-based harnesses
// (pgregory.net/rapid) that check the proof obligations of every execution
// path exactly. Each test names the obligation it discharges.
//
// # Fail files
//
// When a property fails, rapid shrinks the counterexample, prints
// -rapid.failfile=… to replay it, and saves the shrunk choice stream as
// testdata/rapid/<test name>/<test name>-<time>-<pid>.fail. On every
// later run, before drawing new cases, it replays each fail file of the
// test (rapid v1.3.0, engine.go doCheck/checkFailFile): a replay that
// fails fails the test at once, from that file; a replay that passes, or
// whose stream no longer fits the generators, is ignored and the random
// search goes on. So a fail file written by a genuine failure reproduces
// it until the property passes, and a stale one is never a failure in its
// own right (TestFailFileLifecycle pins both). A false failure of an
// oracle is the exception that looks permanent: it replays as long as the
// oracle is wrong, which is why oracles must be sound, not estimated.
//
// Policy:
//
//   - Planted… folders are committed regressions: each belongs to a
//     planted-fault self-test listed in the planted table, which runs
//     under a capturing TB of that name and must fail. Its committed file
//     replays the shrunk counterexample first, so the self-test is fast
//     and deterministic and writes no new file. TestCommittedFailFiles
//     replays every committed file alone and fails, naming the file, when
//     one no longer reproduces its planted failure (stale: the generators
//     changed) or when a folder belongs to no planted test. To prune:
//     delete the named file and run the self-test once; it writes a fresh
//     file, which is committed in its place.
//   - Test… folders are written by genuine failures of ordinary properties.
//     They are local reproductions, ignored by git (testdata/rapid/
//     .gitignore), and replay the failure on every run until it is fixed;
//     after the fix they are harmless, and are deleted by hand
//     (rm -r rapidtests/testdata/rapid/Test*). A counterexample worth
//     keeping becomes an explicit table case in a test — an instance that
//     reads as what it is and cannot go stale silently — not a committed
//     choice stream.
package rapidtests
