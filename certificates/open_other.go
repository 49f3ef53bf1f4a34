//go:build !unix

package certificates

// openNoFollow is empty where the system has no O_NOFOLLOW/O_NONBLOCK;
// ReadRegular's Lstat checks before and after opening still apply.
const openNoFollow = 0
