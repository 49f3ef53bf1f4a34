package spec

import (
	"math/rand/v2"
	"testing"
)

// permuteByIndex is Permute written independently from its definition:
// out[o] = x[Σ idx(o)_i · stride(x)_{perm[i]}], one output at a time.
func permuteByIndex(x Tensor[int], perm []int) []int {
	os := permuteShape(x.Shape, perm)
	ist := x.Shape.Strides()
	ost := os.Strides()
	out := make([]int, len(x.Data))
	for o := range out {
		src, rem := 0, o
		for i := range perm {
			q := rem / max(ost[i], 1)
			rem -= q * ost[i]
			src += q * ist[perm[i]]
		}
		out[o] = x.Data[src]
	}
	return out
}

// TestPermuteFastPaths: the tiled transpose of the last two axes (and
// every other permutation) moves exactly the elements the definition
// says, on shapes around the tile size and with empty extents.
func TestPermuteFastPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	shapes := []Shape{{1, 1}, {31, 33}, {32, 32}, {64, 1}, {1, 65}, {3, 70, 5}, {2, 0, 4}, {2, 3, 33, 31}, {0, 5}}
	for _, s := range shapes {
		x := Tensor[int]{Shape: s, Data: make([]int, s.Size())}
		for i := range x.Data {
			x.Data[i] = i + 1
		}
		perms := [][]int{}
		n := len(s)
		swap := make([]int, n)
		for i := range swap {
			swap[i] = i
		}
		swap[n-1], swap[n-2] = n-2, n-1
		perms = append(perms, swap, r.Perm(n), r.Perm(n))
		for _, p := range perms {
			got, err := Permute(x, p)
			if err != nil {
				t.Fatal(err)
			}
			want := permuteByIndex(x, p)
			for i := range want {
				if got.Data[i] != want[i] {
					t.Fatalf("Permute(%v, %v)[%d] = %d, want %d", s, p, i, got.Data[i], want[i])
				}
			}
			if !got.Shape.Equal(permuteShape(s, p)) {
				t.Fatalf("Permute(%v, %v) shape %v", s, p, got.Shape)
			}
		}
	}
}
