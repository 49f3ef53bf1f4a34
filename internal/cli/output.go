package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Output is a command's stdout that remembers its first write error: a
// report that could not be delivered (a full disk, a closed pipe,
// `> /dev/full`) must not exit 0. After the first failed write, later
// writes are not attempted and return the same error.
type Output struct {
	w   io.Writer
	err error
}

// NewOutput wraps w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = fmt.Errorf("cannot write the output: %w", err)
	}
	return n, o.err
}

// Err is the first write error, or nil.
func (o *Output) Err() error { return o.err }

// WriteErr is the first write error of w when w is an *Output (nil
// otherwise): a command that must react to a lost report before it
// returns (say, by removing what it wrote) asks with it.
func WriteErr(w io.Writer) error {
	if o, ok := w.(*Output); ok {
		return o.err
	}
	return nil
}

// CheckOutputPath validates, without writing anything, a path a command
// will write later (named by --flagName): a directory (wantDir) or a
// file. It must be absent — its nearest existing ancestor then being a
// directory — or already of the kind wanted. Commands call it with their
// other argument checks, so that bad arguments are refused before
// anything is created.
func CheckOutputPath(flagName, path string, wantDir bool) error {
	if path == "" {
		return Usagef("--%s: empty path", flagName)
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && wantDir && !st.IsDir():
		return Usagef("--%s %s: exists and is not a directory", flagName, Quote(path))
	case err == nil && !wantDir && st.IsDir():
		return Usagef("--%s %s: is a directory", flagName, Quote(path))
	case err == nil:
		return nil
	}
	// Absent (or unreachable): judge the nearest existing ancestor.
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if st, e := os.Stat(p); e == nil {
			if !st.IsDir() {
				return Usagef("--%s %s: %s is not a directory", flagName, Quote(path), Quote(p))
			}
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return Usagef("--%s %s: %v", flagName, Quote(path), UnwrapPath(err))
}

// UnwrapPath drops the path an *fs.PathError repeats.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
