package nn

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/strictjson"
	"github.com/tlcheck/tlcheck/spec"
)

// TorchFloat32 and TorchFloat64 are the dtype strings the PyTorch
// parameter JSON accepts in its meta entries (str(tensor.dtype) in
// PyTorch). A float32 Pack needs TorchFloat32, a float64 Pack TorchFloat64;
// any other dtype is rejected.
const (
	TorchFloat32 = "torch.float32"
	TorchFloat64 = "torch.float64"
)

// torchFormat names the PyTorch parameter JSON in errors.
const torchFormat = "torch params"

// ImportTorchParams reads PyTorch parameter JSON,
//
//	{"params": {"layer.weight": [[…]], "layer.bias": […]},
//	 "meta":   {"layer.weight": {"shape": [out, in], "dtype": "torch.float32"}, …}}
//
// and returns the parameters listed in want, in want's order, as a Pack
// of T (spec.F32 for dtype torch.float32, spec.F64 for torch.float64).
//
// The file must hold exactly the names in want, each with a meta entry
// whose shape equals the wanted shape and whose dtype matches T, and
// nested arrays of exactly that shape. Numbers are read with
// json.Decoder.UseNumber: each is taken as the exact decimal value it
// spells and rounded once, to nearest with ties to even, to T
// (strconv.ParseFloat with T's bit size is correctly rounded, so there is
// no double rounding through float64). A number beyond T's finite range is
// rejected rather than turned into an infinity; one below the smallest
// subnormal rounds to a (signed) zero, as IEEE rounding says.
//
// Rejected, each with a one-line *ExchangeError naming the JSON path:
// missing or extra names, params without meta or meta without params,
// duplicate keys, unknown fields, unknown or mismatched dtypes, ragged
// arrays, wrong rank or extents, non-numbers, NaN and Infinity (which are
// not JSON), out-of-range numbers, shapes over spec.DefaultMaxElements or
// spec.MaxRank, and any data after the top-level object.
//
// A tensor with a zero extent may be written with its deeper axes elided,
// as PyTorch's tolist does: shape [0, 3] is [] and [2, 0, 3] is [[], []].
func ImportTorchParams[T ExchangeFloat](r io.Reader, want []ParamSpec) (Pack[T], error) {
	if want == nil {
		want = []ParamSpec{}
	}
	return torchImport[T](r, want)
}

// ImportTorchParamsSorted is ImportTorchParams without an expected list:
// it accepts the file's own names, takes each shape from its meta entry,
// and orders the pack by name (byte-wise ascending), since JSON objects
// carry no order.
func ImportTorchParamsSorted[T ExchangeFloat](r io.Reader) (Pack[T], error) {
	return torchImport[T](r, nil)
}

// ExportTorchParams writes p as PyTorch parameter JSON with deterministic
// bytes: no insignificant whitespace, one trailing newline, "params" then
// "meta", names sorted byte-wise in both objects, meta fields "shape" then
// "dtype", and every number printed as the shortest decimal that reads back
// as the same T (so ImportTorchParams returns bit-identical tensors, −0
// included). NaN and ±Inf have no JSON spelling and are rejected before
// anything is written.
func ExportTorchParams[T ExchangeFloat](w io.Writer, p Pack[T]) error {
	width := exWidth[T]()
	dtype := TorchFloat32
	if width == 64 {
		dtype = TorchFloat64
	}
	order := make([]int, p.Len())
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(p.names[a], p.names[b]) })
	tensors := make([]spec.Tensor[T], p.Len())
	for i := range tensors {
		t, err := p.values[i].Cast(p.values[i].Shape())
		if err != nil {
			return err
		}
		for k, v := range t.Data {
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return &ExchangeError{Format: torchFormat, Where: fmt.Sprintf("params[%q]: element %d", p.names[i], k),
					Msg: fmt.Sprintf("%v has no JSON spelling (use the state formats for non-finite values)", f), Offset: -1}
			}
		}
		tensors[i] = t
	}
	bw := bufio.NewWriter(w)
	var buf []byte
	buf = append(buf, `{"params":{`...)
	for k, i := range order {
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = exAppendJSONString(buf, p.names[i])
		buf = append(buf, ':')
		var err error
		if buf, err = torchAppendNested(buf, tensors[i], bw); err != nil {
			return err
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
	}
	buf = append(buf, `},"meta":{`...)
	for k, i := range order {
		if k > 0 {
			buf = append(buf, ',')
		}
		buf = exAppendJSONString(buf, p.names[i])
		buf = append(buf, `:{"shape":[`...)
		for a, d := range tensors[i].Shape {
			if a > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(d), 10)
		}
		buf = append(buf, `],"dtype":`...)
		buf = exAppendJSONString(buf, dtype)
		buf = append(buf, '}')
	}
	buf = append(buf, "}}\n"...)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// exAppendJSONString appends s as a JSON string (encoding/json's escaping,
// which is deterministic).
func exAppendJSONString(buf []byte, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil { // a string always marshals
		return append(buf, `""`...)
	}
	return append(buf, b...)
}

// torchAppendNested appends t as nested JSON arrays (a bare number for
// rank 0). Large tensors are flushed to bw as they are produced.
//
// Numbers are encoding/json's: a float32 (F32) or float64 (F64) element
// marshals as the shortest decimal that reads back as the same value of
// its width, in ECMAScript style (plain notation for 1e-6 ≤ |f| < 1e21,
// exponent notation otherwise, e-7 not e-07), and −0 as -0. The elements
// are finite (ExportTorchParams rejects the others first), so Marshal
// does not fail on them; each innermost row is one Marshal of its []T.
func torchAppendNested[T ExchangeFloat](buf []byte, t spec.Tensor[T], bw *bufio.Writer) ([]byte, error) {
	var err error
	if len(t.Shape) == 0 {
		return exAppendJSON(buf, t.Data[0], &err), err
	}
	st := t.Shape.Strides()
	var rec func(axis, off int)
	rec = func(axis, off int) {
		if axis == len(t.Shape)-1 {
			if n := t.Shape[axis]; n == 0 {
				buf = append(buf, "[]"...) // a nil row would marshal as null
			} else {
				buf = exAppendJSON(buf, t.Data[off:off+n], &err)
			}
		} else {
			buf = append(buf, '[')
			for i := 0; i < t.Shape[axis]; i++ {
				if i > 0 {
					buf = append(buf, ',')
				}
				rec(axis+1, off+i*st[axis])
			}
			buf = append(buf, ']')
		}
		if len(buf) > 64<<10 {
			// A write error resurfaces from the next Write or Flush.
			_, _ = bw.Write(buf)
			buf = buf[:0]
		}
	}
	rec(0, 0)
	return buf, err
}

// exAppendJSON appends encoding/json's encoding of v, a finite F32 or F64
// or a slice of them; the first error is kept in *errp.
func exAppendJSON(buf []byte, v any, errp *error) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		if *errp == nil {
			*errp = err
		}
		return buf
	}
	return append(buf, b...)
}

// torchData is one parsed params entry: the flat row-major values and the
// shape the nested arrays revealed.
type torchData[T ExchangeFloat] struct {
	data     []T
	obs      []int // observed extents, outermost first
	complete bool  // obs is the full shape; otherwise it ends in a zero extent and deeper axes were not visible
	off      int64 // byte offset where the value ended
}

// torchMeta is one parsed meta entry.
type torchMeta struct {
	shape spec.Shape
	dtype string
	off   int64
}

// torchDecoder reads one PyTorch parameter JSON document.
type torchDecoder[T ExchangeFloat] struct {
	dec   *json.Decoder
	width int
	// per-array parsing state, reset for each params entry
	dims  [spec.MaxRank + 1]int
	arrAt [spec.MaxRank + 1]bool
	leaf  int
	idx   [spec.MaxRank + 1]int
	name  string
	data  []T
}

func (d *torchDecoder[T]) fail(where, msg string) error {
	return &ExchangeError{Format: torchFormat, Where: where, Msg: msg, Offset: d.dec.InputOffset()}
}

// token reads the next token, turning syntax errors and a premature end
// into located errors.
func (d *torchDecoder[T]) token(where string) (json.Token, error) {
	tok, err := d.dec.Token()
	if err == nil {
		return tok, nil
	}
	return nil, exJSONError(torchFormat, where, d.dec, err)
}

// exJSONError locates a json.Decoder error.
func exJSONError(format, where string, dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ExchangeError{Format: format, Where: where, Msg: "unexpected end of input", Offset: dec.InputOffset(), Err: io.ErrUnexpectedEOF}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := "invalid JSON: " + se.Error()
		if strings.Contains(se.Error(), "'N'") || strings.Contains(se.Error(), "'I'") {
			msg += " (NaN and Infinity are not JSON numbers)"
		}
		return &ExchangeError{Format: format, Where: where, Msg: msg, Offset: se.Offset, Err: err}
	}
	return &ExchangeError{Format: format, Where: where, Msg: err.Error(), Offset: dec.InputOffset(), Err: err}
}

// exTokenKind names a JSON token for "expected X, got Y" messages.
func exTokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return "'" + t.String() + "'"
	case json.Number:
		return "the number " + string(t)
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", tok)
}

// expectDelim reads one token that must be the delimiter want.
func (d *torchDecoder[T]) expectDelim(where string, want json.Delim, what string) error {
	tok, err := d.token(where)
	if err != nil {
		return err
	}
	if tok != want {
		return d.fail(where, fmt.Sprintf("expected %s, got %s", what, exTokenKind(tok)))
	}
	return nil
}

func torchImport[T ExchangeFloat](r io.Reader, want []ParamSpec) (Pack[T], error) {
	d := &torchDecoder[T]{dec: json.NewDecoder(r), width: exWidth[T]()}
	d.dec.UseNumber()
	// Validate the expected list before reading anything.
	wantIdx := map[string]int{}
	for i, s := range want {
		if err := exCheckName(s.Name); err != nil {
			return Pack[T]{}, fmt.Errorf("%s: expected parameter %d: %v", torchFormat, i, err)
		}
		if j, dup := wantIdx[s.Name]; dup {
			return Pack[T]{}, fmt.Errorf("%s: expected parameter %d: name %q already listed as parameter %d", torchFormat, i, s.Name, j)
		}
		wantIdx[s.Name] = i
		if _, err := s.Shape.Check(0); err != nil {
			return Pack[T]{}, fmt.Errorf("%s: expected parameter %q: %v", torchFormat, s.Name, err)
		}
	}

	params := map[string]*torchData[T]{}
	metas := map[string]*torchMeta{}
	var haveParams, haveMeta bool
	if err := d.expectDelim("", '{', "a JSON object at the top level"); err != nil {
		return Pack[T]{}, err
	}
	top := exObject{format: torchFormat, keys: []string{"params", "meta"},
		dup:     func(key string) (string, string) { return key, "duplicate field" },
		unknown: func(key string) string { return fmt.Sprintf("unknown field %q (want \"params\" and \"meta\")", key) }}
	err := exMembers(d.dec, top, func(key string) error {
		if key == "params" {
			haveParams = true
			return d.readParams(params)
		}
		haveMeta = true
		return d.readMeta(metas)
	})
	if err != nil {
		return Pack[T]{}, err
	}
	if err := d.expectDelim("", '}', "the end of the top-level object"); err != nil {
		return Pack[T]{}, err
	}
	if err := exExpectEOF(torchFormat, d.dec); err != nil {
		return Pack[T]{}, err
	}
	if !haveParams {
		return Pack[T]{}, &ExchangeError{Format: torchFormat, Msg: `missing field "params"`, Offset: -1}
	}
	if !haveMeta {
		return Pack[T]{}, &ExchangeError{Format: torchFormat, Msg: `missing field "meta"`, Offset: -1}
	}
	return d.assemble(params, metas, want, wantIdx)
}

// exExpectEOF rejects anything but white space after the top-level value.
func exExpectEOF(format string, dec *json.Decoder) error {
	off := dec.InputOffset()
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) && tok == nil {
		return nil
	}
	return &ExchangeError{Format: format, Msg: "trailing data after the top-level object", Offset: off, Err: err}
}

// readParams reads the "params" object.
func (d *torchDecoder[T]) readParams(params map[string]*torchData[T]) error {
	if err := d.expectDelim("params", '{', "an object of parameter arrays"); err != nil {
		return err
	}
	obj := exObject{format: torchFormat, where: "params",
		dup: func(name string) (string, string) { return fmt.Sprintf("params[%q]", name), "duplicate parameter" }}
	err := exMembers(d.dec, obj, func(name string) error {
		if err := exCheckName(name); err != nil {
			return d.fail(fmt.Sprintf("params[%q]", name), err.Error())
		}
		td, err := d.readArray(name)
		if err != nil {
			return err
		}
		params[name] = td
		return nil
	})
	if err != nil {
		return err
	}
	return d.expectDelim("params", '}', "the end of params")
}

// path prints the JSON path of the element at depth.
func (d *torchDecoder[T]) path(depth int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "params[%q]", d.name)
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&b, "[%d]", d.idx[i])
	}
	return b.String()
}

// readArray reads one parameter's nested arrays.
func (d *torchDecoder[T]) readArray(name string) (*torchData[T], error) {
	d.name = name
	d.leaf = -1
	for i := range d.dims {
		d.dims[i] = -1
		d.arrAt[i] = false
	}
	d.data = nil
	if err := d.value(0); err != nil {
		return nil, err
	}
	td := &torchData[T]{data: d.data, off: d.dec.InputOffset()}
	if d.leaf >= 0 {
		td.obs = append([]int{}, d.dims[:d.leaf]...)
		td.complete = true
	} else {
		for i := 0; i <= spec.MaxRank && d.dims[i] >= 0; i++ {
			td.obs = append(td.obs, d.dims[i])
		}
	}
	if td.obs == nil {
		td.obs = []int{}
	}
	d.data = nil
	return td, nil
}

// value reads one element at the given nesting depth.
func (d *torchDecoder[T]) value(depth int) error {
	tok, err := d.token(d.path(depth))
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t != '[' {
			return d.fail(d.path(depth), "expected a number or an array, got "+exTokenKind(tok))
		}
		if d.leaf >= 0 && depth >= d.leaf {
			return d.fail(d.path(depth), "expected a number, got an array (ragged nesting)")
		}
		if depth >= spec.MaxRank {
			return d.fail(d.path(depth), fmt.Sprintf("arrays nested more than %d deep (the maximum rank)", spec.MaxRank))
		}
		d.arrAt[depth] = true
		n := 0
		for d.dec.More() {
			d.idx[depth] = n
			if err := d.value(depth + 1); err != nil {
				return err
			}
			n++
			if d.dims[depth] >= 0 && n > d.dims[depth] {
				return d.fail(d.path(depth), fmt.Sprintf("ragged array: more than %d elements, as the first array at this depth has", d.dims[depth]))
			}
		}
		if err := d.expectDelim(d.path(depth), ']', "the end of the array"); err != nil {
			return err
		}
		if d.dims[depth] < 0 {
			d.dims[depth] = n
		} else if n != d.dims[depth] {
			return d.fail(d.path(depth), fmt.Sprintf("ragged array: %d elements, but the first array at this depth has %d", n, d.dims[depth]))
		}
		return nil
	case json.Number:
		where := d.path(depth)
		if d.arrAt[depth] {
			return d.fail(where, "expected an array, got "+exTokenKind(tok)+" (ragged nesting)")
		}
		if d.leaf < 0 {
			d.leaf = depth
		}
		if len(d.data) >= spec.DefaultMaxElements {
			return d.fail(where, fmt.Sprintf("more than %d elements", spec.DefaultMaxElements))
		}
		f, err := strconv.ParseFloat(string(t), d.width)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange && math.IsInf(f, 0) {
				return d.fail(where, fmt.Sprintf("%s is beyond the finite %s range", t, exWidthName(d.width)))
			}
			return d.fail(where, fmt.Sprintf("bad number %s: %v", t, err))
		}
		d.data = append(d.data, T(f))
		return nil
	default:
		return d.fail(d.path(depth), "expected a number, got "+exTokenKind(tok))
	}
}

// readMeta reads the "meta" object.
func (d *torchDecoder[T]) readMeta(metas map[string]*torchMeta) error {
	if err := d.expectDelim("meta", '{', "an object of meta entries"); err != nil {
		return err
	}
	obj := exObject{format: torchFormat, where: "meta",
		dup: func(name string) (string, string) { return fmt.Sprintf("meta[%q]", name), "duplicate parameter" }}
	err := exMembers(d.dec, obj, func(name string) error {
		where := fmt.Sprintf("meta[%q]", name)
		if err := exCheckName(name); err != nil {
			return d.fail(where, err.Error())
		}
		if err := d.expectDelim(where, '{', `an object {"shape": [...], "dtype": "..."}`); err != nil {
			return err
		}
		m := &torchMeta{}
		var haveShape, haveDtype bool
		entry := exObject{format: torchFormat, where: where, keys: []string{"shape", "dtype"},
			dup: func(field string) (string, string) { return where + "." + field, "duplicate field" },
			unknown: func(field string) string {
				return fmt.Sprintf("unknown field %q (want \"shape\" and \"dtype\")", field)
			}}
		err := exMembers(d.dec, entry, func(field string) error {
			fw := where + "." + field
			if field == "shape" {
				haveShape = true
				var err error
				m.shape, err = d.readShape(fw)
				return err
			}
			haveDtype = true
			tok, err := d.token(fw)
			if err != nil {
				return err
			}
			s, ok := tok.(string)
			if !ok {
				return d.fail(fw, "expected a string, got "+exTokenKind(tok))
			}
			m.dtype = s
			return nil
		})
		if err != nil {
			return err
		}
		if err := d.expectDelim(where, '}', "the end of the meta entry"); err != nil {
			return err
		}
		if !haveShape {
			return d.fail(where, `missing field "shape"`)
		}
		if !haveDtype {
			return d.fail(where, `missing field "dtype"`)
		}
		if _, err := m.shape.Check(0); err != nil {
			return d.fail(where+".shape", err.Error())
		}
		m.off = d.dec.InputOffset()
		metas[name] = m
		return nil
	})
	if err != nil {
		return err
	}
	return d.expectDelim("meta", '}', "the end of meta")
}

// readShape reads a JSON array of at most spec.MaxRank non-negative
// integers.
func (d *torchDecoder[T]) readShape(where string) (spec.Shape, error) {
	if err := d.expectDelim(where, '[', "an array of extents"); err != nil {
		return nil, err
	}
	shape := spec.Shape{}
	for d.dec.More() {
		ew := fmt.Sprintf("%s[%d]", where, len(shape))
		if len(shape) >= spec.MaxRank {
			return nil, d.fail(where, fmt.Sprintf("more than %d extents (the maximum rank)", spec.MaxRank))
		}
		tok, err := d.token(ew)
		if err != nil {
			return nil, err
		}
		v, msg := exNatural(tok, math.MaxInt64)
		if msg != "" {
			return nil, d.fail(ew, msg)
		}
		shape = append(shape, int(v))
	}
	if err := d.expectDelim(where, ']', "the end of the shape"); err != nil {
		return nil, err
	}
	return shape, nil
}

// exNatural reads a token that must be a plain non-negative integer
// (digits only: no sign, fraction or exponent) not above max. It returns
// the value or a message saying what is wrong.
func exNatural(tok json.Token, max uint64) (uint64, string) {
	num, ok := tok.(json.Number)
	if !ok {
		return 0, "expected a non-negative integer, got " + exTokenKind(tok)
	}
	s := string(num)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Sprintf("expected a non-negative integer written with digits only, got %s", s)
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Sprintf("%s is out of range (at most %d)", s, max)
	}
	return v, ""
}

// torchShapeString prints an observed data shape.
func torchShapeString(obs []int, complete bool) string {
	s := spec.Shape(obs).String()
	if !complete {
		s += " (deeper axes empty)"
	}
	return s
}

// assemble cross-checks params, meta and the expected list and builds the
// pack.
func (d *torchDecoder[T]) assemble(params map[string]*torchData[T], metas map[string]*torchMeta, want []ParamSpec, wantIdx map[string]int) (Pack[T], error) {
	fail := func(where, msg string, off int64) error {
		return &ExchangeError{Format: torchFormat, Where: where, Msg: msg, Offset: off}
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := metas[name]; !ok {
			return Pack[T]{}, fail(fmt.Sprintf("params[%q]", name), "no meta entry for this parameter", params[name].off)
		}
	}
	metaNames := make([]string, 0, len(metas))
	for name := range metas {
		metaNames = append(metaNames, name)
	}
	slices.Sort(metaNames)
	for _, name := range metaNames {
		if _, ok := params[name]; !ok {
			return Pack[T]{}, fail(fmt.Sprintf("meta[%q]", name), "no params entry for this parameter", metas[name].off)
		}
	}
	wantDtype := TorchFloat32
	if d.width == 64 {
		wantDtype = TorchFloat64
	}
	for _, name := range names {
		m := metas[name]
		switch m.dtype {
		case wantDtype:
		case TorchFloat32, TorchFloat64:
			return Pack[T]{}, fail(fmt.Sprintf("meta[%q].dtype", name),
				fmt.Sprintf("dtype %s does not match the requested %s pack", m.dtype, exWidthName(d.width)), m.off)
		default:
			return Pack[T]{}, fail(fmt.Sprintf("meta[%q].dtype", name),
				fmt.Sprintf("unknown dtype %q (supported: %s, %s)", m.dtype, TorchFloat32, TorchFloat64), m.off)
		}
	}
	order := names
	if want != nil {
		for _, s := range want {
			if _, ok := params[s.Name]; !ok {
				return Pack[T]{}, fail("", fmt.Sprintf("missing parameter %q (expected shape %v)", s.Name, s.Shape), -1)
			}
		}
		for _, name := range names {
			if _, ok := wantIdx[name]; !ok {
				return Pack[T]{}, fail(fmt.Sprintf("params[%q]", name), "unexpected parameter (not in the expected list)", params[name].off)
			}
		}
		for _, s := range want {
			if m := metas[s.Name]; !m.shape.Equal(s.Shape) {
				return Pack[T]{}, fail(fmt.Sprintf("meta[%q].shape", s.Name),
					fmt.Sprintf("shape %v does not match the expected shape %v", m.shape, s.Shape), m.off)
			}
		}
		order = make([]string, len(want))
		for i, s := range want {
			order[i] = s.Name
		}
	}
	values := make([]spec.SomeTensor[T], len(order))
	for i, name := range order {
		p, m := params[name], metas[name]
		if !torchShapeMatches(p.obs, p.complete, m.shape) {
			return Pack[T]{}, fail(fmt.Sprintf("params[%q]", name),
				fmt.Sprintf("nested arrays have shape %s but meta says %v", torchShapeString(p.obs, p.complete), m.shape), p.off)
		}
		data := p.data
		if data == nil {
			data = []T{}
		}
		t, err := spec.NewTensor(m.shape, data)
		if err != nil {
			return Pack[T]{}, fail(fmt.Sprintf("params[%q]", name), err.Error(), p.off)
		}
		values[i] = spec.Erase(t)
	}
	return NewPack(order, values)
}

// torchShapeMatches reports whether nested arrays of the observed shape
// spell a tensor of shape want.
func torchShapeMatches(obs []int, complete bool, want spec.Shape) bool {
	if complete {
		return spec.Shape(obs).Equal(want)
	}
	return len(obs) <= len(want) && spec.Shape(obs).Equal(want[:len(obs)])
}

// exObject describes one JSON object of an exchange format for exMembers:
// where it is, its allowed keys (nil: any, such as parameter names), and
// how a repeated or an unknown key is reported.
type exObject struct {
	format, where string
	keys          []string
	// dup returns the location and message of a repeated key.
	dup func(key string) (where, msg string)
	// unknown returns the message of a key not in keys (at where).
	unknown func(key string) string
}

// exMembers reads the members of the object o, whose '{' dec has just
// returned, with the one strict reader (strictjson.Members), calling f
// with each key and dec before its value; it returns before the closing
// '}'. A repeated or unknown key and a decoder error become located
// *ExchangeError values; f's errors pass unchanged.
func exMembers(dec *json.Decoder, o exObject, f func(key string) error) error {
	err := strictjson.Members(dec, o.keys, f)
	var xe *ExchangeError
	var de *strictjson.DuplicateError
	var ue *strictjson.UnknownKeyError
	switch {
	case err == nil || errors.As(err, &xe):
		return err
	case errors.As(err, &de):
		where, msg := o.dup(de.Key)
		return &ExchangeError{Format: o.format, Where: where, Msg: msg, Offset: dec.InputOffset()}
	case errors.As(err, &ue):
		return &ExchangeError{Format: o.format, Where: o.where, Msg: o.unknown(ue.Key), Offset: dec.InputOffset()}
	}
	return exJSONError(o.format, o.where, dec, err)
}
