package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Tensor is a decoded TensorProto. Exactly the element slice of its
// DataType is set, with NumElements entries in row-major order: Float32
// for FLOAT and — widened, exactly: every binary16 and bfloat16 value is a
// float32 — for FLOAT16 and BFLOAT16, Float64 for DOUBLE, Int64 for INT64,
// UINT32 (widened) and UINT64 (its 64 bits: a value of 2⁶³ or more reads
// negative; Rats and Uint64At give the unsigned value), Int32 for INT32 and —
// widened — for INT8, UINT8, INT16, UINT16 and BOOL (0 or 1).
type Tensor struct {
	Name     string
	Dims     []int64
	DataType DataType
	Float32  []float32
	Float64  []float64
	Int64    []int64
	Int32    []int32
}

// NumElements is the product of the dims (1 for a scalar, rank 0); an
// error for a negative dim, a rank above spec.MaxRank, or a product beyond
// the element limit in force.
func (t *Tensor) NumElements() (int, error) {
	s, err := t.Shape()
	if err != nil {
		return 0, err
	}
	return s.Size(), nil
}

// Shape is the tensor's dims as a spec.Shape, checked by spec.Shape.Check
// against the limits in force (rank, per-axis extent, element count).
func (t *Tensor) Shape() (spec.Shape, error) {
	s, err := t.shape()
	if err != nil {
		return nil, fmt.Errorf("%s: dims: %w", t.where(), err)
	}
	return s, nil
}

func (t *Tensor) shape() (spec.Shape, error) {
	if len(t.Dims) > spec.MaxRank {
		return nil, fmt.Errorf("%d dims, more than %d", len(t.Dims), spec.MaxRank)
	}
	s := make(spec.Shape, len(t.Dims))
	for i, v := range t.Dims {
		if v < 0 {
			return nil, fmt.Errorf("%s: dim %d is negative", joinDims(t.Dims), i)
		}
		if int64(int(v)) != v {
			return nil, limits.Exceeded("axis", int64(limits.Current().Axis), "%s: dim %d is %d", joinDims(t.Dims), i, v)
		}
		s[i] = int(v)
	}
	if _, err := s.Check(0); err != nil {
		return nil, err
	}
	return s, nil
}

// where names the tensor for an error line.
func (t *Tensor) where() string {
	if t.Name == "" {
		return "tensor"
	}
	return "tensor " + quote(t.Name)
}

// Len is the length of the element slice of the tensor's DataType.
func (t *Tensor) Len() int {
	switch {
	case t.DataType == Float || t.DataType.Is16() || t.DataType.IsMini():
		return len(t.Float32)
	case t.DataType == Double:
		return len(t.Float64)
	case t.DataType == Int64 || t.DataType == Uint32 || t.DataType == Uint64:
		return len(t.Int64)
	}
	return len(t.Int32)
}

// Uint64At is element i of a UINT64 tensor as the unsigned value it is
// (Int64 holds its bits).
func (t *Tensor) Uint64At(i int) uint64 { return uint64(t.Int64[i]) }

// Rats returns the exact value of every element. A float32 or float64 is
// a dyadic rational m·2^e, converted exactly (spec.RatFromFloat64; a
// float32 widens to float64 exactly); integers are exact. A NaN or an
// infinity is an error naming the tensor and the element index.
func (t *Tensor) Rats() ([]spec.Rat, error) {
	where := t.where()
	n, err := t.NumElements()
	if err != nil {
		return nil, err
	}
	if !t.DataType.Supported() {
		return nil, at(where, fmt.Errorf("data type %s is not supported", t.DataType))
	}
	if t.Len() != n {
		return nil, at(where, fmt.Errorf("%d elements of data, but dims %s have %d", t.Len(), joinDims(t.Dims), n))
	}
	out := make([]spec.Rat, n)
	for i := range out {
		switch t.DataType {
		case Float, Double, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1:
			f := float64(0)
			if t.DataType != Double {
				f = float64(t.Float32[i])
			} else {
				f = t.Float64[i]
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, at(where, fmt.Errorf("element %d is %v, not a finite number", i, f))
			}
			r, err := spec.RatFromFloat64(f)
			if err != nil {
				return nil, at(where, fmt.Errorf("element %d: %v", i, err))
			}
			out[i] = r
		case Int64, Uint32:
			out[i] = spec.NewRat(t.Int64[i], 1)
		case Uint64:
			out[i] = spec.RatFromBig(new(big.Rat).SetInt(new(big.Int).SetUint64(t.Uint64At(i))))
		default:
			out[i] = spec.NewRat(int64(t.Int32[i]), 1)
		}
	}
	return out, nil
}

// DecodeTensor decodes one serialized TensorProto (an input_N.pb or
// output_N.pb file of the ONNX test data); the same checks and limits
// apply as to an initializer.
func DecodeTensor(data []byte) (*Tensor, error) {
	d := newTensorDec(data)
	if err := d.checkSize(int64(len(data)), "tensor file"); err != nil {
		return nil, &Error{Err: err}
	}
	t, err := d.tensor(data, "tensor", -1, false)
	if err != nil {
		return nil, &Error{Err: truncated(err, data, decodeTensorFile)}
	}
	return t, nil
}

// ReadTensor reads and decodes the TensorProto file at path; its errors
// start "onnx: PATH: ".
func ReadTensor(path string) (*Tensor, error) {
	data, err := newDec(nil).readFile(path, "tensor file")
	if err != nil {
		return nil, &Error{Path: path, Err: err}
	}
	d := newTensorDec(data)
	t, err := d.tensor(data, "tensor", -1, false)
	if err != nil {
		return nil, &Error{Path: path, Err: truncated(err, data, decodeTensorFile)}
	}
	return t, nil
}

func decodeTensorFile(d *dec, data []byte) (*Tensor, error) {
	return d.tensor(data, "tensor", -1, false)
}

var tensorFields = fieldNames{
	1: "dims", 2: "data_type", 3: "segment", 4: "float_data", 5: "int32_data", 6: "string_data", 7: "int64_data",
	8: "name", 9: "raw_data", 10: "double_data", 11: "uint64_data", 13: "external_data", 14: "data_location",
}

// typedField is the typed data field of each decoded data type.
func typedField(t DataType) protowire.Number {
	switch t {
	case Float:
		return 4
	case Double:
		return 10
	case Int64:
		return 7
	case Uint32, Uint64:
		return 11 // uint64_data holds UINT32 and UINT64
	}
	return 5 // int32_data holds INT32 and the narrower integer types
}

// tensor decodes a TensorProto in two passes: the first reads dims, type,
// name and raw_data and counts the elements of each typed field; then the
// dims are checked and compared with the data, and only then does the
// second pass allocate and fill the element slice.
func (d *dec) tensor(b []byte, kind string, index int, cut bool) (*Tensor, error) {
	t := &Tensor{Name: peek(b, 8)}
	where := name(kind, t.Name, index)
	sc := &tensorScan{t: t}
	if err := d.scan(b, tensorFields, sc.field); err != nil {
		return nil, at(where, err)
	}
	if cut {
		return nil, at(where, cutErr(b))
	}
	n, err := d.checkTensor(sc)
	if err != nil {
		return nil, at(where, err)
	}
	t.alloc(n)
	if sc.present[9] {
		if err := t.fromRaw(sc.raw); err != nil {
			return nil, at(where, err)
		}
		return t, nil
	}
	if n == 0 {
		return t, nil
	}
	if err := d.fillTensor(t, b, n); err != nil {
		return nil, at(where, err)
	}
	return t, nil
}

// A tensorScan is what the first pass over a TensorProto reads: the
// tensor's name and type (into t), its dims, raw_data, the data location,
// and the elements of each typed data field, counted, not decoded.
type tensorScan struct {
	t        *Tensor
	counts   [16]int  // elements per typed data field number
	present  [16]bool // which data fields occur
	raw      []byte
	external bool
	location int32
	dims     []uint64
}

// field reads one field of the first pass.
func (sc *tensorScan) field(f *field) error {
	if f.num < 16 {
		sc.present[f.num] = true
	}
	switch f.num {
	case 1:
		k, err := f.count(protowire.VarintType, 0)
		if err != nil {
			return err
		}
		if len(sc.dims)+k > spec.MaxRank {
			return fmt.Errorf("more than %d dims", spec.MaxRank)
		}
		return f.eachVarint(func(v uint64) error { sc.dims = append(sc.dims, v); return nil })
	case 2:
		v, err := f.int32v()
		sc.t.DataType = DataType(v)
		return err
	case 3:
		return errors.New("segmented tensors are not supported")
	case 4:
		k, err := f.count(protowire.Fixed32Type, 4)
		sc.counts[4] += k
		return err
	case 5, 7, 11:
		k, err := f.count(protowire.VarintType, 0)
		sc.counts[f.num] += k
		return err
	case 10:
		k, err := f.count(protowire.Fixed64Type, 8)
		sc.counts[10] += k
		return err
	case 6:
		_, err := f.bytes()
		return err
	case 8:
		s, err := f.text()
		sc.t.Name = s
		return err
	case 9:
		s, err := f.bytes()
		sc.raw = s
		return err
	case 13:
		_, err := f.bytes()
		sc.external = true
		return err
	case 14:
		v, err := f.int32v()
		sc.location = v
		return err
	}
	return nil
}

// checkTensor checks what the first pass read — the data location, the data
// type, the dims within the budget, one data field of the type holding as
// many elements as the dims make — sets the tensor's dims, charges its
// values to the budget, and returns its number of elements.
func (d *dec) checkTensor(sc *tensorScan) (int, error) {
	t := sc.t
	if sc.external || sc.location == 1 {
		return 0, fmt.Errorf("field data_location (14): external data is not supported (save the model with its tensors inside the file)")
	}
	if sc.location != 0 {
		return 0, fmt.Errorf("field data_location (14): %d is not a TensorProto.DataLocation", sc.location)
	}
	if t.DataType == Undefined {
		return 0, fmt.Errorf("field data_type (2): missing or UNDEFINED")
	}
	if !t.DataType.Supported() {
		return 0, fmt.Errorf("field data_type (2): data type %s is not supported (FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8, BOOL, the float 8 and float 4 types, INT4, UINT4, INT2 and UINT2 are)", t.DataType)
	}
	t.Dims = make([]int64, len(sc.dims))
	for i, v := range sc.dims {
		t.Dims[i] = int64(v)
	}
	if err := d.useElements(len(t.Dims)); err != nil {
		return 0, err
	}
	shape, err := t.shape()
	if err != nil {
		return 0, fmt.Errorf("field dims (1): %w", err)
	}
	n := shape.Size()
	if err := d.useElements(n); err != nil {
		return 0, err
	}
	want := typedField(t.DataType)
	for _, num := range []protowire.Number{4, 5, 6, 7, 10, 11} {
		if sc.present[num] && num != want {
			return 0, fmt.Errorf("field %s (%d) is set, but the data type is %s (its field is %s or raw_data)", tensorFields[num], num, t.DataType, tensorFields[want])
		}
	}
	hasRaw := sc.present[9]
	if hasRaw && sc.present[want] {
		return 0, fmt.Errorf("both raw_data (9) and %s (%d) are set", tensorFields[want], want)
	}
	switch k := t.DataType.PerByte(); {
	case hasRaw && k > 1:
		if units := (n + k - 1) / k; len(sc.raw) != units {
			return 0, fmt.Errorf("field raw_data (9): %d bytes, but dims %s make %d elements of %s, %d to a byte: %d bytes", len(sc.raw), joinDims(t.Dims), n, t.DataType, k, units)
		}
	case hasRaw:
		size := t.DataType.Size()
		if len(sc.raw) != n*size {
			return 0, fmt.Errorf("field raw_data (9): %d bytes, but dims %s × %d bytes (%s) make %d", len(sc.raw), joinDims(t.Dims), size, t.DataType, n*size)
		}
	case k > 1 && sc.counts[want] != (n+k-1)/k:
		return 0, fmt.Errorf("field %s (%d): %d entries, but dims %s have %d elements of %s, %d to an entry", tensorFields[want], want, sc.counts[want], joinDims(t.Dims), n, t.DataType, k)
	case k == 1 && sc.counts[want] != n:
		return 0, fmt.Errorf("field %s (%d): %d elements, but dims %s have %d", tensorFields[want], want, sc.counts[want], joinDims(t.Dims), n)
	}
	if err := d.useValues(n, t.DataType); err != nil {
		return 0, err
	}
	return n, nil
}

// fillTensor is the second pass: it decodes the n elements of t's typed data
// field in b into t's allocated element slice.
func (d *dec) fillTensor(t *Tensor, b []byte, n int) error {
	want := typedField(t.DataType)
	i := 0
	err := d.scan(b, tensorFields, func(f *field) error {
		if f.num != want {
			return nil
		}
		switch t.DataType {
		case Float:
			f.eachFixed32(func(v uint32) { t.Float32[i] = math.Float32frombits(v); i++ })
		case Double:
			f.eachFixed64(func(v uint64) { t.Float64[i] = math.Float64frombits(v); i++ })
		case Int64, Uint64:
			return f.eachVarint(func(v uint64) error { t.Int64[i] = int64(v); i++; return nil })
		case Uint32:
			return f.eachVarint(func(v uint64) error {
				if v > math.MaxUint32 {
					return fmt.Errorf("element %d: %d is out of the range of UINT32", i, v)
				}
				t.Int64[i] = int64(v)
				i++
				return nil
			})
		case Float16, BFloat16:
			// int32_data holds the 16 bits of each element.
			return f.eachVarint(func(v uint64) error {
				if v > 0xFFFF {
					return fmt.Errorf("element %d: %d is not 16 bits", i, v)
				}
				t.Float32[i] = from16(t.DataType, uint16(v))
				i++
				return nil
			})
		case Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1, Int4, Uint4, Int2, Uint2:
			// int32_data holds one byte per entry: one float 8 element,
			// or PerByte packed elements.
			k := t.DataType.PerByte()
			return f.eachVarint(func(v uint64) error {
				if v > 0xFF {
					return fmt.Errorf("entry %d: %d is not 8 bits", i/k, v)
				}
				for j := 0; j < k && i < n; j++ {
					t.setPacked(i, uint8(v)>>(j*8/k))
					i++
				}
				return nil
			})
		default:
			return f.eachVarint(func(v uint64) error {
				x := int32(v)
				if err := narrowCheck(t.DataType, int64(x)); err != nil {
					return fmt.Errorf("element %d: %v", i, err)
				}
				t.Int32[i] = x
				i++
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i != n { // cannot happen: counted in pass 1
		return fmt.Errorf("field %s (%d): %d elements decoded, %d counted", tensorFields[want], want, i, n)
	}
	return nil
}

// alloc makes the element slice of t's type, of length n.
func (t *Tensor) alloc(n int) {
	switch t.DataType {
	case Float, Float16, BFloat16, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1:
		t.Float32 = make([]float32, n)
	case Double:
		t.Float64 = make([]float64, n)
	case Int64, Uint32, Uint64:
		t.Int64 = make([]int64, n)
	default:
		t.Int32 = make([]int32, n)
	}
}

// narrowCheck refuses a value outside the range of a narrow integer type.
func narrowCheck(t DataType, v int64) error {
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch t {
	case Int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case Uint8:
		lo, hi = 0, math.MaxUint8
	case Int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case Uint16:
		lo, hi = 0, math.MaxUint16
	case Bool:
		lo, hi = 0, 1
	}
	if v < lo || v > hi {
		return fmt.Errorf("%d is out of the range of %s", v, t)
	}
	return nil
}

// fromRaw decodes raw_data, little-endian; its length has been checked.
func (t *Tensor) fromRaw(raw []byte) error {
	le := binary.LittleEndian
	switch t.DataType {
	case Float:
		for i := range t.Float32 {
			t.Float32[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
	case Double:
		for i := range t.Float64 {
			t.Float64[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
	case Int64, Uint64:
		for i := range t.Int64 {
			t.Int64[i] = int64(le.Uint64(raw[8*i:]))
		}
	case Uint32:
		for i := range t.Int64 {
			t.Int64[i] = int64(le.Uint32(raw[4*i:]))
		}
	case Int32:
		for i := range t.Int32 {
			t.Int32[i] = int32(le.Uint32(raw[4*i:]))
		}
	case Int16:
		for i := range t.Int32 {
			t.Int32[i] = int32(int16(le.Uint16(raw[2*i:])))
		}
	case Float16, BFloat16:
		for i := range t.Float32 {
			t.Float32[i] = from16(t.DataType, le.Uint16(raw[2*i:]))
		}
	case Uint16:
		for i := range t.Int32 {
			t.Int32[i] = int32(le.Uint16(raw[2*i:]))
		}
	case Int8:
		for i := range t.Int32 {
			t.Int32[i] = int32(int8(raw[i]))
		}
	case Uint8:
		for i := range t.Int32 {
			t.Int32[i] = int32(raw[i])
		}
	case Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1, Int4, Uint4, Int2, Uint2:
		k := t.DataType.PerByte()
		n := len(t.Float32) + len(t.Int32)
		for i := 0; i < n; i++ {
			t.setPacked(i, raw[i/k]>>((i%k)*8/k))
		}
	case Bool:
		for i := range t.Int32 {
			if raw[i] > 1 {
				return fmt.Errorf("field raw_data (9): element %d: byte %d is not a BOOL (0 or 1)", i, raw[i])
			}
			t.Int32[i] = int32(raw[i])
		}
	}
	return nil
}

// from16 widens the bits of a FLOAT16 (IEEE 754 binary16) or BFLOAT16
// element to the float32 of the same value, exactly: bfloat16 is the top
// half of a binary32; a binary16 (1 sign, 5 exponent, 10 fraction bits,
// bias 15) is normal, subnormal (fraction·2^-24), zero, infinite or NaN.
func from16(dt DataType, h uint16) float32 {
	if dt == BFloat16 {
		return math.Float32frombits(uint32(h) << 16)
	}
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	e, f := int(h>>10)&0x1f, int(h&0x3ff)
	switch e {
	case 0:
		return sign * float32(math.Ldexp(float64(f), -24))
	case 0x1f:
		if f != 0 {
			return float32(math.NaN())
		}
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(float64(1024+f), e-25))
}

// setPacked sets element i of a float 8, float 4 or sub-byte integer
// tensor from the low bits of b (the element's bits shifted down to bit
// 0; higher bits are ignored): the exact value of the pattern (NaN and ±∞
// as themselves), a sub-byte integer sign-extended for INT4 and INT2.
func (t *Tensor) setPacked(i int, b uint8) {
	switch t.DataType {
	case Int4:
		t.Int32[i] = int32(int8(b<<4) >> 4)
	case Uint4:
		t.Int32[i] = int32(b & 0xF)
	case Int2:
		t.Int32[i] = int32(int8(b<<6) >> 6)
	case Uint2:
		t.Int32[i] = int32(b & 0x3)
	case Float8E8M0:
		t.Float32[i] = float32(spec.DecodeE8M0(b))
	default:
		m, _ := miniFormat(t.DataType)
		t.Float32[i] = float32(m.Decode(b))
	}
}
