//go:build !unix

package safeio

// openFlags is empty where the system has no O_NONBLOCK; Open's checks
// before and after opening still apply.
const openFlags = 0
