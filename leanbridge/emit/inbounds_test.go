package emit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// smallShapes lists every shape of rank 1 to 3 with extents 0 to 3.
func smallShapes() [][]int {
	var out [][]int
	var rec func(s []int)
	rec = func(s []int) {
		if len(s) > 0 {
			out = append(out, append([]int{}, s...))
		}
		if len(s) == 3 {
			return
		}
		for n := 0; n <= 3; n++ {
			rec(append(s, n))
		}
	}
	rec(nil)
	return out
}

// indexLists lists every list of length 0 to 3 with entries -1 to 3.
func indexLists() [][]int {
	out := [][]int{{}}
	for l := 1; l <= 3; l++ {
		var rec func(s []int)
		rec = func(s []int) {
			if len(s) == l {
				out = append(out, append([]int{}, s...))
				return
			}
			for v := -1; v <= 3; v++ {
				rec(append(s, v))
			}
		}
		rec(nil)
	}
	return out
}

// inBounds reports the first entry of g at or past n, or -1.
func inBounds(g []int, n int) int {
	for i, j := range g {
		if j < 0 || j >= n {
			return i
		}
	}
	return -1
}

// inBoundsCheck ties the in-bounds theorems of lean/Tlcheck/Index.lean
// (sliceIdx_lt, gatherIdx_lt) to the registry's shape rules for slice and
// gather. Over every small attribute — shapes of rank ≤ 3 with extents
// ≤ 3, every axis (one past the rank included), slice bounds from −1 to
// 5, gather index lists of length ≤ 3 with entries from −1 to 3 —
// whenever the rule accepts the attribute, the theorem's hypotheses must
// hold for it as the emitter writes it (slice: stop ≤ shape[axis];
// gather: the normalised axis below the rank and every index below its
// extent), and the Go transcription of Spec.lean's index list must be in
// bounds (the theorem's conclusion, recomputed). It also counts the
// refused attributes on which the transcription reads past the end: the
// hypotheses are needed, so a theorem without them would be false. The
// same for broadcast_to (bcastIdx_lt) over every pair of small shapes:
// rank ≤ target rank, each extent 1 or the target's, aligned right.
func inBoundsCheck(slice, gather, bcast *spec.OpInfo) (counts [6]int, err error) {
	for _, s := range smallShapes() {
		for _, to := range append(smallShapes(), []int{}) {
			a := &spec.Attrs{Shape: spec.Shape(to)}
			_, err := bcast.InferShape(a, []spec.Shape{s})
			m := mattr{shape: s, toShape: to}
			if err != nil {
				if len(s) <= len(to) {
					if g, _ := m.index("broadcast_to"); inBounds(g, size(s)) >= 0 {
						counts[5]++
					}
				}
				continue
			}
			counts[4]++
			if len(s) > len(to) {
				return counts, fmt.Errorf("broadcast_to %v → %v: the registry accepts it but bcastIdx_lt's hypothesis rank ≤ target rank fails", s, to)
			}
			for d := range s {
				if s[d] != 1 && s[d] != to[len(to)-len(s)+d] {
					return counts, fmt.Errorf("broadcast_to %v → %v: the registry accepts it but bcastIdx_lt's hypothesis fails at axis %d", s, to, d)
				}
			}
			g, _ := m.index("broadcast_to")
			if i := inBounds(g, size(s)); i >= 0 {
				return counts, fmt.Errorf("broadcast_to %v → %v: index entry %d is %d, not below %d", s, to, i, g[i], size(s))
			}
		}
	}
	for _, s := range smallShapes() {
		r := len(s)
		n := size(s)
		for axis := -r - 1; axis <= r; axis++ {
			ax := normAx(r, axis)
			for start := -1; start <= 5; start++ {
				for end := -1; end <= 5; end++ {
					a := &spec.Attrs{Axis: axis, Start: start, End: end}
					_, err := slice.InferShape(a, []spec.Shape{s})
					m := mattr{shape: s, axis: axis, start: start, stop: end}
					if err != nil {
						if ax < r && start >= 0 && end > s[ax] && start < end {
							if g, _ := m.index("slice"); inBounds(g, n) >= 0 {
								counts[1]++
							}
						}
						continue
					}
					counts[0]++
					if ax >= r || start < 0 || end > s[ax] {
						return counts, fmt.Errorf("slice %v axis %d [%d:%d): the registry accepts it but sliceIdx_lt's hypothesis stop ≤ shape[axis] fails", s, axis, start, end)
					}
					g, _ := m.index("slice")
					if i := inBounds(g, n); i >= 0 {
						return counts, fmt.Errorf("slice %v axis %d [%d:%d): index entry %d is %d, not below %d", s, axis, start, end, i, g[i], n)
					}
				}
			}
		}
		for axis := -r - 1; axis <= r; axis++ {
			ax := normAx(r, axis)
			for _, idx := range indexLists() {
				a := &spec.Attrs{Axis: axis, Indices: idx, IndicesShape: spec.Shape{len(idx)}}
				_, err := gather.InferShape(a, []spec.Shape{s})
				m := mattr{shape: s, axis: axis, perm: idx}
				if err != nil {
					if ax < r && len(idx) > 0 && n > 0 {
						nat := true
						for _, i := range idx {
							nat = nat && i >= 0
						}
						if g, _ := m.index("gather"); nat && inBounds(g, n) >= 0 {
							counts[3]++
						}
					}
					continue
				}
				counts[2]++
				if ax >= r {
					return counts, fmt.Errorf("gather %v axis %d: the registry accepts it but gatherIdx_lt's hypothesis axis < rank fails", s, axis)
				}
				for j, i := range idx {
					if i < 0 || i >= s[ax] {
						return counts, fmt.Errorf("gather %v axis %d indices %v: the registry accepts index %d (entry %d) but gatherIdx_lt needs it below %d", s, axis, idx, i, j, s[ax])
					}
				}
				g, _ := m.index("gather")
				if i := inBounds(g, n); i >= 0 {
					return counts, fmt.Errorf("gather %v axis %d indices %v: index entry %d is %d, not below %d", s, axis, idx, i, g[i], n)
				}
			}
		}
	}
	return counts, nil
}

// TestInBoundsHypotheses runs inBoundsCheck on the reference registry's
// rules, then on two planted rules — a slice that also accepts
// end = extent + 1 and a gather that also accepts the index = extent —
// and demands that it catches each.
func TestInBoundsHypotheses(t *testing.T) {
	reg := spec.Default[spec.Rat]()
	slice, err := reg.Lookup("slice")
	if err != nil {
		t.Fatal(err)
	}
	gather, err := reg.Lookup("gather")
	if err != nil {
		t.Fatal(err)
	}
	bcast, err := reg.Lookup("broadcast_to")
	if err != nil {
		t.Fatal(err)
	}
	c, err := inBoundsCheck(slice.OpInfo, gather.OpInfo, bcast.OpInfo)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accepted, and refused reading past the end: slice %d, %d; gather %d, %d; broadcast_to %d, %d", c[0], c[1], c[2], c[3], c[4], c[5])
	if c[0] < 1000 || c[1] == 0 || c[2] < 1000 || c[3] == 0 || c[4] < 100 || c[5] == 0 {
		t.Fatalf("vacuous: %v", c)
	}

	badSlice := *slice.OpInfo
	badSlice.Shape = func(a *spec.Attrs, in []spec.Shape) (spec.Shape, error) {
		b := *a
		if ax := normAx(len(in[0]), a.Axis); ax < len(in[0]) && b.End == in[0][ax]+1 && b.Start < b.End {
			b.End-- // the planted rule: one past the extent passes
		}
		return slice.OpInfo.Shape(&b, in)
	}
	if _, err := inBoundsCheck(&badSlice, gather.OpInfo, bcast.OpInfo); err == nil || !strings.Contains(err.Error(), "slice") {
		t.Errorf("a slice rule accepting end = extent + 1 was not caught (err %v)", err)
	}
	badGather := *gather.OpInfo
	badGather.Shape = func(a *spec.Attrs, in []spec.Shape) (spec.Shape, error) {
		b := *a
		if ax := normAx(len(in[0]), a.Axis); ax < len(in[0]) {
			b.Indices = append([]int{}, a.Indices...)
			for j, i := range b.Indices {
				if i == in[0][ax] && i > 0 {
					b.Indices[j] = i - 1 // the planted rule: the extent itself passes
				}
			}
		}
		return gather.OpInfo.Shape(&b, in)
	}
	if _, err := inBoundsCheck(slice.OpInfo, &badGather, bcast.OpInfo); err == nil || !strings.Contains(err.Error(), "gather") {
		t.Errorf("a gather rule accepting the index = extent was not caught (err %v)", err)
	}
	badBcast := *bcast.OpInfo
	badBcast.Shape = func(a *spec.Attrs, in []spec.Shape) (spec.Shape, error) {
		if len(in[0]) <= len(a.Shape) {
			return a.Shape.Clone(), nil // the planted rule: any extents pass
		}
		return bcast.OpInfo.Shape(a, in)
	}
	if _, err := inBoundsCheck(slice.OpInfo, gather.OpInfo, &badBcast); err == nil || !strings.Contains(err.Error(), "broadcast_to") {
		t.Errorf("a broadcast_to rule accepting any extents was not caught (err %v)", err)
	}
}

// TestInBoundsTheoremsStated checks that Index.lean states the in-bounds
// theorems with the hypotheses the test above ties to the registry.
func TestInBoundsTheoremsStated(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Index.lean"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"theorem sliceIdx_lt (a : Attr) (hstop : a.stop ≤ nthN a.shape a.ax) (k : Nat) (hk : k < size a.sliceShape) :\n    nthN a.sliceIdx k < size a.shape",
		"theorem gatherIdx_lt (a : Attr) (hax : a.ax < a.shape.length)\n    (hidx : ∀ j, j < a.perm.length → nthN a.perm j < a.dimK)",
		"(k : Nat) (hk : k < a.dimA * (a.perm.length * a.dimB)) : nthN a.gatherIdx k < size a.shape",
		"theorem bcastIdx_lt (a : Attr) (hlen : a.shape.length ≤ a.toShape.length)",
		"nthN a.shape d = 1 ∨ nthN a.shape d = nthN a.toShape (a.toShape.length - a.shape.length + d))\n    (k : Nat) (hk : k < size a.toShape) : nthN a.bcastIdx k < size a.shape",
		"theorem concatSrc_lt (ax : Nat) (m : List Nat) :\n    ∀ (ss : List (List Nat)) (p base : Nat),\n      p < (ss.map (fun s => nthN s ax)).foldr (· + ·) 0 →\n      (∀ s, s ∈ ss → ∀ q, q < nthN s ax → Below (setN m ax q) s) →\n      concatSrc ax m ss p base < base + totalSize ss",
		"theorem wsum_lt : ∀ (m s : List Nat), Below m s → wsum m (strides s) < size s",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("Index.lean does not state %q", want)
		}
	}
}

// below reports whether m is a multi-index of s (Index.lean's Below).
func below(m, s []int) bool {
	if len(m) != len(s) {
		return false
	}
	for d := range m {
		if m[d] < 0 || m[d] >= s[d] {
			return false
		}
	}
	return true
}

// concatCheck ties concatSrc_lt to the registry's concat rule: for every
// pair of small shapes and every axis the rule accepts, at every output
// multi-index m (Lean's concatShape, the first input's with the axis
// extents summed) the theorem's hypotheses hold — m[axis] below the total
// extent, and m with any q below an input's axis extent a multi-index of
// that input — and the transcription's index list is below the
// concatenation's size (the conclusion). It returns how many instances
// the rule accepted.
func concatCheck(concat *spec.OpInfo) (int, error) {
	ok := 0
	shapes := smallShapes()
	for _, s1 := range shapes {
		for _, s2 := range shapes {
			if len(s2) != len(s1) {
				continue
			}
			r := len(s1)
			for axis := -r; axis < r; axis++ {
				if _, err := concat.InferShape(&spec.Attrs{Axis: axis}, []spec.Shape{s1, s2}); err != nil {
					continue
				}
				ok++
				ax := normAx(r, axis)
				o := append([]int{}, s1...)
				o[ax] = s1[ax] + s2[ax]
				for i := 0; i < size(o); i++ {
					m := unflat(o, i)
					if m[ax] >= o[ax] {
						return ok, fmt.Errorf("concat %v %v axis %d: coordinate %d not below the total extent %d", s1, s2, axis, m[ax], o[ax])
					}
					for _, s := range [][]int{s1, s2} {
						for q := 0; q < s[ax]; q++ {
							mq := append([]int{}, m...)
							mq[ax] = q
							if !below(mq, s) {
								return ok, fmt.Errorf("concat %v %v axis %d: the registry accepts it but concatSrc_lt's hypothesis fails: %v is not a multi-index of %v", s1, s2, axis, mq, s)
							}
						}
					}
				}
				g, _ := mattr{shape: s1, axis: axis, shapes: [][]int{s1, s2}}.index("concat")
				if i := inBounds(g, size(s1)+size(s2)); i >= 0 {
					return ok, fmt.Errorf("concat %v %v axis %d: index entry %d is %d, not below %d", s1, s2, axis, i, g[i], size(s1)+size(s2))
				}
			}
		}
	}
	return ok, nil
}

// TestConcatInBounds runs concatCheck on the registry's concat and on a
// planted rule that also accepts inputs whose extents differ off the
// axis, and demands that it catches the planted one.
func TestConcatInBounds(t *testing.T) {
	concat, err := spec.Default[spec.Rat]().Lookup("concat")
	if err != nil {
		t.Fatal(err)
	}
	n, err := concatCheck(concat.OpInfo)
	if err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("vacuous: %d accepted concat instances", n)
	}
	bad := *concat.OpInfo
	bad.Shape = func(a *spec.Attrs, in []spec.Shape) (spec.Shape, error) {
		ax := normAx(len(in[0]), a.Axis)
		out := in[0].Clone()
		for _, s := range in[1:] {
			if len(s) != len(out) {
				return nil, fmt.Errorf("rank")
			}
			out[ax] += s[ax] // the planted rule: off-axis extents unchecked
		}
		return out, nil
	}
	if _, err := concatCheck(&bad); err == nil || !strings.Contains(err.Error(), "hypothesis fails") {
		t.Errorf("a concat rule accepting off-axis mismatches was not caught (err %v)", err)
	} else {
		t.Logf("planted concat rule: %v", err)
	}
}
