// Package safeio is the one way tlcheck opens a file named on its command
// line (a model, a graph, a payload, a tensor, a gradients dump, a
// lean4export file): only a regular file is read. A named pipe (FIFO),
// a device (/dev/zero, /dev/stdin on a terminal), a socket or a directory
// is refused with an error that names its type, before a byte is read and
// without blocking.
//
// # Why opening cannot block or run without bound
//
// The path is first examined with Stat (which follows symbolic links: a
// user may name a link to a model), and anything but a regular file is
// refused without being opened, so a FIFO is never opened by that path.
// The file is then opened with O_NONBLOCK where the system has it — so
// that if the path was replaced by a FIFO between Stat and open, open
// returns at once instead of waiting for a writer — and examined again on
// the open descriptor (Fstat): it must still be a regular file and the same
// file Stat saw. O_NONBLOCK has no effect on reading a regular file. Reads
// of a regular file end at its end; ReadFile additionally refuses a file
// larger than its byte budget by its size before allocating, and reads at
// most one byte past the budget, so a file growing while read cannot make
// it allocate more.
//
// # Symbolic links
//
// A file named on the command line may be a symbolic link, wherever it
// leads: the user chose it (a link to a model kept elsewhere is ordinary),
// so Open follows it. A link that leads nowhere (dangling) or to itself
// (a loop) is refused with one error naming which. The risk of links is
// elsewhere: in a directory tlcheck walks (a recorded data set, a
// certificate or shard directory), whose entries the user did not name one
// by one and which may come, whole, from an untrusted source. There
// "inside the tree" means inside the directory that was named: an entry is
// read only when it resolves inside that directory (StatIn, os.Root's
// rule: links are followed while they stay in it), so a link out of it,
// a loop or a dangling link is refused, each named. Paths named inside
// files are not followed at all (an ONNX tensor's external_data is refused
// by the onnx reader).
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// NotRegularError reports a path that is not a regular file.
type NotRegularError struct {
	Mode fs.FileMode // the type found
}

func (e *NotRegularError) Error() string {
	return "is " + Describe(e.Mode) + ", not a regular file"
}

// Describe names a file type for an error ("a named pipe (FIFO)").
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file (" + m.Type().String() + ")"
}

// Open opens path for reading if it is a regular file (see the package
// doc). Like os.Open, its error is an *fs.PathError with Op "open" (its Err
// a *NotRegularError for a file of another type), so a caller that names
// the file itself can drop the path.
func Open(path string) (*os.File, error) {
	fail := func(err error) (*os.File, error) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: unwrapPath(err)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fail(linkReason(path, err))
	}
	if !fi.Mode().IsRegular() {
		return fail(&NotRegularError{Mode: fi.Mode()})
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return fail(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fail(err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return fail(&NotRegularError{Mode: st.Mode()})
	}
	if !os.SameFile(fi, st) {
		f.Close()
		return fail(errors.New("replaced while being opened"))
	}
	return f, nil
}

// TooLargeError reports a file larger than the byte budget of its reader.
type TooLargeError struct {
	Size int64 // the size found (at least Max+1 when read rather than stat'ed)
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d bytes, more than the %d allowed", e.Size, e.Max)
}

// ReadFile reads a regular file of at most max bytes (see Open); a larger
// file is refused by its size before anything is allocated. Its errors do
// not repeat the path: the caller names the file.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer f.Close()
	return ReadAll(f, max)
}

// ReadAll reads an opened regular file of at most max bytes: the size is
// checked before the buffer is allocated, and at most max+1 bytes are read
// (a file that grew past max since is refused).
func ReadAll(f *os.File, max int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, unwrapPath(err)
	}
	if st.Size() > max {
		return nil, &TooLargeError{Size: st.Size(), Max: max}
	}
	buf := make([]byte, 0, st.Size()+1)
	for {
		if int64(len(buf)) > max {
			return nil, &TooLargeError{Size: int64(len(buf)), Max: max}
		}
		if len(buf) == cap(buf) {
			more := int64(len(buf))
			if more < 512 {
				more = 512
			}
			if more > max+1-int64(len(buf)) {
				more = max + 1 - int64(len(buf))
			}
			buf = slices.Grow(buf, int(more))
		}
		end := min(int64(cap(buf)), max+1) // never read past max+1 bytes
		n, err := f.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if int64(len(buf)) > max {
				return nil, &TooLargeError{Size: int64(len(buf)), Max: max}
			}
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading: %v", unwrapPath(err))
		}
	}
}

// unwrapPath drops the path an *fs.PathError repeats (the caller names the
// file, as the user spelled it).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// DanglingError reports a symbolic link whose target does not exist.
type DanglingError struct {
	Target string // the link's target as written in it
}

func (e *DanglingError) Error() string {
	return "is a dangling symbolic link (its target " + strconv.Quote(e.Target) + " does not exist)"
}

// LoopError reports a symbolic link that leads back to itself.
type LoopError struct{}

func (e *LoopError) Error() string {
	return "is a symbolic link loop (too many levels of symbolic links)"
}

// EscapeError reports an entry of a walked directory that resolves outside
// that directory.
type EscapeError struct{}

func (e *EscapeError) Error() string {
	return "is a symbolic link out of the directory (only entries inside it are read)"
}

// linkReason words the error of a failed Stat of path when path is a
// symbolic link: a dangling link or a loop. Any other error is returned
// as it is.
func linkReason(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return &LoopError{}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	li, lerr := os.Lstat(path)
	if lerr != nil || li.Mode()&fs.ModeSymlink == 0 {
		return err
	}
	target, rerr := os.Readlink(path)
	if rerr != nil {
		return err
	}
	return &DanglingError{Target: target}
}

// StatIn examines the entry name (a relative path) of the directory dir
// as a reader of that directory may use it (see the package doc): it
// follows symbolic links only while they stay inside dir (os.Root), and
// refuses a link out of dir (*EscapeError), a loop (*LoopError) and a
// dangling link (*DanglingError); the caller judges the type of what it
// resolves to (a data set's entries are opened with Open). dir itself may be a link
// (the user named it). The check is made when the directory is listed;
// the entry is then opened by its path with Open, so a directory changed
// concurrently by another process is outside what it guards (the threat
// is a hostile directory, not a racing one). Its errors do not repeat the
// path.
func StatIn(dir, name string) (fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, unwrapPath(err)
	}
	defer root.Close()
	fi, err := root.Stat(name)
	if err == nil {
		return fi, nil
	}
	// It does not resolve inside dir: if it resolves at all, a link
	// leads out (os.Root refuses it, whatever lies there); else a loop, a
	// dangling link, or nothing there.
	p := filepath.Join(dir, name)
	_, serr := os.Stat(p)
	if serr == nil {
		return nil, &EscapeError{}
	}
	if r := linkReason(p, serr); r != serr {
		return nil, r
	}
	return nil, unwrapPath(err)
}
