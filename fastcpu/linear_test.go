package fastcpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refLinear is the reference provider's linear: a left fold from +0 over
// in, then + b.
func refLinear(x []float32, rows, in int, w []float32, out int, b []float32) []float32 {
	y := make([]float32, rows*out)
	for r := 0; r < rows; r++ {
		for o := 0; o < out; o++ {
			acc := float32(0)
			for i := 0; i < in; i++ {
				acc = acc + float32(x[r*in+i]*w[o*in+i])
			}
			if b != nil {
				acc = acc + b[o]
			}
			y[r*out+o] = acc
		}
	}
	return y
}

func TestLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, s := range [][3]int{{0, 3, 4}, {1, 0, 4}, {1, 1, 1}, {2, 2, 8}, {25, 2, 8}, {25, 8, 1}, {7, 65, 9}, {130, 300, 70}, {3, 4, 0}} {
		rows, in, out := s[0], s[1], s[2]
		for _, withBias := range []bool{false, true} {
			t.Run(fmt.Sprintf("%dx%dx%d/bias=%v", rows, in, out, withBias), func(t *testing.T) {
				x, w := randVec(r, rows*in), randVec(r, out*in)
				var b []float32
				if withBias {
					b = randVec(r, out)
				}
				y := make([]float32, rows*out)
				for i := range y {
					y[i] = float32(math.NaN())
				}
				if err := LinearChecked(x, rows, in, w, out, b, y); err != nil {
					t.Fatal(err)
				}
				want := refLinear(x, rows, in, w, out, b)
				if i, ok := sameBits(y, want); !ok {
					t.Fatalf("y[%d] = %g, reference %g", i, y[i], want[i])
				}
				for rr := 0; rr < rows; rr++ {
					for o := 0; o < out; o++ {
						s, abs := 0.0, 0.0
						for i := 0; i < in; i++ {
							p := float64(x[rr*in+i]) * float64(w[o*in+i])
							s += p
							abs += math.Abs(p)
						}
						terms := in
						if b != nil {
							s += float64(b[o])
							abs += math.Abs(float64(b[o]))
							terms++
						}
						if e := math.Abs(float64(y[rr*out+o]) - s); !(e <= dotBound(terms, abs)) {
							t.Fatalf("y[%d][%d]: error %g exceeds γ_%d bound %g", rr, o, e, terms, dotBound(terms, abs))
						}
					}
				}
			})
		}
	}
}

func TestLinearCheckedErrors(t *testing.T) {
	buf := make([]float32, 64)
	cases := []struct {
		name     string
		x        []float32
		rows, in int
		w        []float32
		out      int
		b, y     []float32
	}{
		{"negative rows", buf, -1, 2, buf, 2, nil, make([]float32, 4)},
		{"short x", make([]float32, 5), 2, 3, buf, 2, nil, make([]float32, 4)},
		{"short w", buf, 2, 3, make([]float32, 5), 2, nil, make([]float32, 4)},
		{"short b", buf, 2, 3, buf, 2, make([]float32, 1), make([]float32, 4)},
		{"short y", buf, 2, 3, buf, 2, nil, make([]float32, 3)},
		{"y overlaps x", buf[:6], 2, 3, buf[20:26], 2, nil, buf[4:8]},
		{"y overlaps w", buf[:6], 2, 3, buf[20:26], 2, nil, buf[25:29]},
		{"y overlaps b", buf[:6], 2, 3, buf[20:26], 2, buf[40:42], buf[41:45]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), tc.y...)
			if err := LinearChecked(tc.x, tc.rows, tc.in, tc.w, tc.out, tc.b, tc.y); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
			if _, ok := sameBits(before, tc.y); !ok {
				t.Fatal("y modified on error")
			}
		})
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Linear with a short y did not panic")
		}
	}()
	Linear(buf, 2, 3, buf, 2, nil, make([]float32, 3))
}

func second[T any](_ T, err error) error { return err }
