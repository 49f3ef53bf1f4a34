package nn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// TLSF32BMagic is the 7-byte magic that opens a TLSF32B stream. No padding
// follows it: the version field starts at byte 7, as in TorchLean's
// CheckpointIO, which writes the magic bytes and then the version.
const TLSF32BMagic = "TLSF32B"

// TLSF32BVersion is the only version of the stream this package reads and
// writes.
const TLSF32BVersion = 1

// tlsfFormat names the stream in errors.
const tlsfFormat = "TLSF32B"

// tlsfChunk is the payload chunk in bytes: the reader never holds more
// than this much raw payload at once, and grows a tensor's data only as
// its bytes actually arrive.
const tlsfChunk = 64 << 10

// TLSF32BReader reads a TLSF32B stream one tensor at a time:
//
//	magic "TLSF32B" (7 bytes, no padding)
//	version      u64 LE (= 1)
//	tensor count u64 LE
//	per tensor:  rank u64 LE, rank × dim u64 LE, element count u64 LE,
//	             element count × float32 LE
//
// All integers are little-endian and unaligned. The reader checks every
// field before acting on it: the rank against spec.MaxRank before reading
// dims, the dims with spec.Shape.Check (spec.DefaultMaxElements) and the
// element count against their product before reading the payload, and
// it allocates a tensor's data only as the payload bytes arrive (or at
// once when the source reports how many bytes remain and that many are
// there), so a hostile header cannot make it allocate more than the input
// holds. NaN words other than CanonicalNaN32 are rejected, as are
// truncation and any byte after the last tensor. Every error is a one-line
// *ExchangeError naming the tensor index, field, element index and byte
// offset. After an error the reader stays failed. Create one with
// NewTLSF32BReader; the zero value is not usable.
type TLSF32BReader struct {
	r     io.Reader
	br    *bufio.Reader // r when it was wrapped for buffering, else nil
	lener interface{ Len() int }
	off   int64
	count uint64
	next  uint64
	err   error
	word  [8]byte
	buf   []byte
}

// NewTLSF32BReader reads and checks the stream header (magic, version,
// tensor count). Sources that report their unread length (bytes.Reader,
// bytes.Buffer, strings.Reader) are read directly; others are buffered.
func NewTLSF32BReader(r io.Reader) (*TLSF32BReader, error) {
	d := &TLSF32BReader{}
	if l, ok := r.(interface{ Len() int }); ok {
		d.r, d.lener = r, l
	} else {
		d.br = bufio.NewReaderSize(r, tlsfChunk)
		d.r = d.br
	}
	var magic [len(TLSF32BMagic)]byte
	if n, err := io.ReadFull(d.r, magic[:]); err != nil {
		return nil, d.ioFail("magic", n, len(magic), err)
	}
	if string(magic[:]) != TLSF32BMagic {
		return nil, d.fail("magic", fmt.Sprintf("not a TLSF32B stream: starts with %q", magic[:]), 0, nil)
	}
	d.off = int64(len(magic))
	v, err := d.u64("version")
	if err != nil {
		return nil, err
	}
	if v != TLSF32BVersion {
		return nil, d.fail("version", fmt.Sprintf("unsupported version %d (this reader knows %d)", v, TLSF32BVersion), d.off-8, nil)
	}
	if d.count, err = d.u64("tensor count"); err != nil {
		return nil, err
	}
	return d, nil
}

// Count is the number of tensors the header announces.
func (d *TLSF32BReader) Count() uint64 { return d.count }

// Offset is the number of bytes of the stream consumed so far.
func (d *TLSF32BReader) Offset() int64 { return d.off }

func (d *TLSF32BReader) fail(where, msg string, off int64, err error) error {
	e := &ExchangeError{Format: tlsfFormat, Where: where, Msg: msg, Offset: off, Err: err}
	d.err = e
	return e
}

// ioFail reports a failed read of want bytes at the current offset, of
// which got arrived.
func (d *TLSF32BReader) ioFail(where string, got, want int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.fail(where, fmt.Sprintf("truncated: %d of %d bytes present", got, want), d.off, io.ErrUnexpectedEOF)
	}
	return d.fail(where, "read error: "+err.Error(), d.off, err)
}

// u64 reads one little-endian u64 field.
func (d *TLSF32BReader) u64(where string) (uint64, error) {
	n, err := io.ReadFull(d.r, d.word[:])
	if err != nil {
		return 0, d.ioFail(where, n, 8, err)
	}
	d.off += 8
	return binary.LittleEndian.Uint64(d.word[:]), nil
}

// remaining reports how many unread bytes the source holds, when it says.
func (d *TLSF32BReader) remaining() (int64, bool) {
	if d.lener == nil {
		return 0, false
	}
	return int64(d.lener.Len()), true
}

// Next returns the next tensor. After the last announced tensor it checks
// that the stream ends there and returns io.EOF; a trailing byte is an
// error instead.
func (d *TLSF32BReader) Next() (spec.SomeTensor[spec.F32], error) {
	if d.err != nil {
		return spec.SomeTensor[spec.F32]{}, d.err
	}
	if d.next == d.count {
		var b [1]byte
		n, err := io.ReadFull(d.r, b[:])
		if n > 0 {
			return spec.SomeTensor[spec.F32]{}, d.fail("", fmt.Sprintf("trailing bytes after the last of %d tensors", d.count), d.off, nil)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return spec.SomeTensor[spec.F32]{}, d.fail("", "read error: "+err.Error(), d.off, err)
		}
		d.err = io.EOF
		return spec.SomeTensor[spec.F32]{}, io.EOF
	}
	i := d.next
	where := func(field string) string { return fmt.Sprintf("tensor %d: %s", i, field) }
	rankOff := d.off
	rank, err := d.u64(where("rank"))
	if err != nil {
		return spec.SomeTensor[spec.F32]{}, err
	}
	if rank > spec.MaxRank {
		return spec.SomeTensor[spec.F32]{}, d.fail(where("rank"), fmt.Sprintf("rank %d exceeds the maximum %d", rank, spec.MaxRank), rankOff, nil)
	}
	dimsOff := d.off
	var raw [spec.MaxRank]uint64
	dims := raw[:rank]
	shape := make(spec.Shape, rank)
	for a := range dims {
		aOff := d.off
		if dims[a], err = d.u64(where("dims")); err != nil {
			return spec.SomeTensor[spec.F32]{}, err
		}
		if dims[a] > math.MaxInt64 {
			return spec.SomeTensor[spec.F32]{}, d.fail(where("dims"), fmt.Sprintf("axis %d: extent %d out of range", a, dims[a]), aOff, nil)
		}
		shape[a] = int(dims[a])
	}
	n, err := shape.Check(0)
	if err != nil {
		return spec.SomeTensor[spec.F32]{}, d.fail(where("dims"), err.Error(), dimsOff, nil)
	}
	countOff := d.off
	count, err := d.u64(where("count"))
	if err != nil {
		return spec.SomeTensor[spec.F32]{}, err
	}
	if count != uint64(n) {
		return spec.SomeTensor[spec.F32]{}, d.fail(where("dims"), fmt.Sprintf("element count %d does not match dims %v", count, dims), countOff, nil)
	}
	payOff := d.off
	bytes := int64(n) * 4
	if rem, ok := d.remaining(); ok && rem < bytes {
		return spec.SomeTensor[spec.F32]{}, d.fail(where("payload"), fmt.Sprintf("truncated: %d elements need %d bytes, only %d remain", n, bytes, rem), payOff, io.ErrUnexpectedEOF)
	}
	var data []spec.F32
	if _, ok := d.remaining(); ok {
		data = make([]spec.F32, 0, n) // the bytes are known to be there
	} else {
		data = make([]spec.F32, 0, min(n, tlsfChunk/4))
	}
	if d.buf == nil {
		d.buf = make([]byte, tlsfChunk)
	}
	for len(data) < n {
		k := min(n-len(data), tlsfChunk/4)
		chunk := d.buf[:4*k]
		got, err := io.ReadFull(d.r, chunk)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return spec.SomeTensor[spec.F32]{}, d.fail(where("payload"),
					fmt.Sprintf("truncated: %d of %d bytes present", int64(len(data))*4+int64(got), bytes), payOff, io.ErrUnexpectedEOF)
			}
			return spec.SomeTensor[spec.F32]{}, d.fail(where("payload"), "read error: "+err.Error(), d.off+int64(got), err)
		}
		if len(data)+k > cap(data) {
			// Double (never past n), so a stream that is cut short has made
			// the reader allocate at most twice what actually arrived.
			grown := make([]spec.F32, len(data), min(n, max(2*cap(data), len(data)+k)))
			copy(grown, data)
			data = grown
		}
		base := len(data)
		for j := 0; j < k; j++ {
			u := binary.LittleEndian.Uint32(chunk[4*j:])
			if u&0x7F800000 == 0x7F800000 && u&0x007FFFFF != 0 && u != CanonicalNaN32 {
				e := base + j
				return spec.SomeTensor[spec.F32]{}, d.fail(where("payload"),
					fmt.Sprintf("element %d: non-canonical NaN 0x%08X (only 0x%08X is accepted)", e, u, CanonicalNaN32), payOff+int64(e)*4, nil)
			}
			data = append(data, spec.F32(math.Float32frombits(u)))
		}
		d.off += int64(4 * k)
	}
	d.next++
	return spec.Erase(spec.Tensor[spec.F32]{Shape: shape, Data: data}), nil
}

// ReadTLSF32B reads a whole TLSF32B stream (see TLSF32BReader) and
// returns its tensors in order. It reads r only up to the end of the
// stream plus one byte (to reject trailing data), buffering sources that
// do not report their length.
func ReadTLSF32B(r io.Reader) ([]spec.SomeTensor[spec.F32], error) {
	d, err := NewTLSF32BReader(r)
	if err != nil {
		return nil, err
	}
	// Preallocate only what the input can hold: a tensor record takes at
	// least 20 bytes (rank 0: rank, count and one element).
	hint := uint64(64)
	if rem, ok := d.remaining(); ok {
		hint = uint64(rem / 20)
	}
	out := make([]spec.SomeTensor[spec.F32], 0, min(d.count, hint))
	for {
		t, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
}

// TLSF32BWriter writes a TLSF32B stream one tensor at a time, so a large
// model never needs a second in-memory copy of its state. The bytes are
// fully determined by the tensors. Each tensor is checked (shape limits,
// canonical NaNs) before any of its bytes are written; an error leaves a
// stream that the reader rejects. Create one with NewTLSF32BWriter; the
// zero value is not usable.
type TLSF32BWriter struct {
	w       *bufio.Writer
	count   int
	written int
	err     error
	buf     []byte
}

// NewTLSF32BWriter writes the header of a stream that will hold count
// tensors.
func NewTLSF32BWriter(w io.Writer, count int) (*TLSF32BWriter, error) {
	if count < 0 {
		return nil, fmt.Errorf("%s: negative tensor count %d", tlsfFormat, count)
	}
	e := &TLSF32BWriter{w: bufio.NewWriterSize(w, tlsfChunk), count: count, buf: make([]byte, 0, tlsfChunk)}
	e.buf = append(e.buf, TLSF32BMagic...)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, TLSF32BVersion)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(count))
	if err := e.flushBuf(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *TLSF32BWriter) flushBuf() error {
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = err
		return err
	}
	e.buf = e.buf[:0]
	return nil
}

// Write appends one tensor record.
func (e *TLSF32BWriter) Write(s spec.SomeTensor[spec.F32]) error {
	if e.err != nil {
		return e.err
	}
	if e.written >= e.count {
		return fmt.Errorf("%s: writing tensor %d, but the header announced %d", tlsfFormat, e.written, e.count)
	}
	ts, err := exCheckState(tlsfFormat, []spec.SomeTensor[spec.F32]{s}, 32, e.written)
	if err != nil {
		return err
	}
	e.writeTensor(ts[0])
	if e.err != nil {
		return e.err
	}
	e.written++
	return nil
}

// writeTensor appends a checked tensor.
func (e *TLSF32BWriter) writeTensor(t spec.Tensor[spec.F32]) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(len(t.Shape)))
	for _, d := range t.Shape {
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(d))
	}
	e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(len(t.Data)))
	data := t.Data
	for len(data) > 0 {
		room := (cap(e.buf) - len(e.buf)) / 4
		if room == 0 {
			if e.flushBuf() != nil {
				return
			}
			continue
		}
		k := min(room, len(data))
		start := len(e.buf)
		e.buf = e.buf[:start+4*k]
		for j, v := range data[:k] {
			binary.LittleEndian.PutUint32(e.buf[start+4*j:], math.Float32bits(float32(v)))
		}
		data = data[k:]
	}
	_ = e.flushBuf()
}

// Close checks that exactly the announced number of tensors was written
// and flushes the buffered bytes. It does not close the underlying writer.
func (e *TLSF32BWriter) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.written != e.count {
		e.err = fmt.Errorf("%s: %d tensors written, but the header announced %d", tlsfFormat, e.written, e.count)
		return e.err
	}
	if err := e.w.Flush(); err != nil {
		e.err = err
		return err
	}
	return nil
}

// WriteTLSF32B writes state as one TLSF32B stream. Every tensor is checked
// before the first byte is written, so on error nothing is written.
func WriteTLSF32B(w io.Writer, state []spec.SomeTensor[spec.F32]) error {
	ts, err := exCheckState(tlsfFormat, state, 32, 0)
	if err != nil {
		return err
	}
	e, err := NewTLSF32BWriter(w, len(ts))
	if err != nil {
		return err
	}
	for _, t := range ts {
		e.writeTensor(t)
		if e.err != nil {
			return e.err
		}
		e.written++
	}
	return e.Close()
}
