// Package version holds tlcheck's version string, shared by the command
// line and the certificate manifest.
package version

// Version is the tool version. Certificates record it, so it changes
// whenever a change could alter what tlcheck checks or writes.
const Version = "0.1.0"
