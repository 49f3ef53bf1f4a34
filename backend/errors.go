package backend

import (
	"fmt"
	"strings"
)

// NoProfileError reports a device without a maintained runtime profile.
type NoProfileError struct {
	Device string
}

// Error is "device `X` has no maintained runtime profile; provide a
// backend profile with executable capsules".
func (e *NoProfileError) Error() string {
	return fmt.Sprintf("device `%s` has no maintained runtime profile; provide a backend profile with executable capsules", e.Device)
}

// NoCapsuleError reports that a profile admits no capsule for an op.
// Rejected lists every candidate (the capsules declared for the op, in
// catalog order) with its reasons; it is empty when the catalog declares
// no capsule for the op at all.
type NoCapsuleError struct {
	Op       string
	Profile  string // the profile's name
	Policy   string // the profile's policies, as Profile.String prints them
	Rejected []Rejection
}

// Error names the op and profile and lists each rejected capsule and why.
func (e *NoCapsuleError) Error() string {
	if len(e.Rejected) == 0 {
		return fmt.Sprintf("backend: profile %s declares no capsule for %s", e.Policy, e.Op)
	}
	parts := make([]string, len(e.Rejected))
	for i, r := range e.Rejected {
		parts[i] = "rejected " + r.String()
	}
	return fmt.Sprintf("backend: no admissible capsule for %s on profile %s: %s",
		e.Op, e.Policy, strings.Join(parts, "; "))
}

// MissingProviderError reports a capsule whose provider is not registered,
// so no runtime handler can execute it.
type MissingProviderError struct {
	Capsule  string
	Op       string
	Provider string
}

// Error names the capsule and the missing provider.
func (e *MissingProviderError) Error() string {
	return fmt.Sprintf("backend: cannot bind capsule %s for %s: missing provider %q (no runtime provider of that name is registered)",
		e.Capsule, e.Op, e.Provider)
}

// MissingHandlerError reports a registered provider that has no handler
// for the capsule's op, or that runs on another device than the capsule
// declares.
type MissingHandlerError struct {
	Capsule  string
	Op       string
	Provider string
	Reason   string
}

// Error names the capsule, the provider and what is missing.
func (e *MissingHandlerError) Error() string {
	return fmt.Sprintf("backend: cannot bind capsule %s for %s: missing handler: provider %q %s",
		e.Capsule, e.Op, e.Provider, e.Reason)
}
