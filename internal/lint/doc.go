// Package lint holds the tests that keep the repository's source within
// the limits issue 29 set for it. Today that is one limit: no non-test
// function has a cyclomatic complexity above 40, where a function's
// complexity is 1 plus one for each if, for and range statement, each
// case clause of a switch or select other than default, and each && and
// || operator in its body (function literals count toward the function
// that contains them). It has no API.
package lint
