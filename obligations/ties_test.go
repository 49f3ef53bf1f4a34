package obligations

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// convBNReluPool is Conv → BatchNorm → ReLU → 2×2 MaxPool → sum on an 8×8
// image whose left half is flat (every value 1/3): the windows over the
// flat half hold equal values, whose enclosures over spec.Interval
// overlap, so the order in the window cannot be decided. var + eps = 1,
// so the graph is exact over Rat as well.
const convBNReluPool = `{"format":"torchlean.ir.v1","input_id":0,"output_id":5,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,8,8]},
  {"id":1,"kind":"conv","parents":[0],"shape":[1,8,8],"kernel":[3,3],"stride":[1,1],"padding":[1,1],"dilation":[1,1],"groups":1,"in_channels":1,"out_channels":1},
  {"id":2,"kind":"batch_norm_eval","parents":[1],"shape":[1,8,8],"channel_axis":0,"channels":1},
  {"id":3,"kind":"relu","parents":[2],"shape":[1,8,8]},
  {"id":4,"kind":"max_pool","parents":[3],"shape":[1,4,4],"kernel":[2,2],"stride":[2,2],"padding":[0,0]},
  {"id":5,"kind":"sum","parents":[4],"shape":[]}]}`

const convBNReluPoolPayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"W":{"shape":[1,1,3,3],"values":["1/3","-1/7","1/5","2/9","1/3","-1/11","1/13","1/7","1/3"]},"b":{"shape":[1],"values":["1/3"]}},
  "2":{"mean":{"shape":[1],"values":["1/10"]},"var":{"shape":[1],"values":["99999/100000"]},"gamma":{"shape":[1],"values":["3/2"]},"beta":{"shape":[1],"values":["1/10"]},"eps":"1/100000"}}}`

// TestGradIntervalFlatRegionMaxPool: grad over intervals on Conv →
// BatchNorm → ReLU → MaxPool with a flat half no longer refuses ("the
// order of input elements 25 and 17 in its window cannot be decided"):
// every path returns enclosures, and each contains the exact gradient
// computed over Rat (where the ties are decided exactly and split 1/t).
func TestGradIntervalFlatRegionMaxPool(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(convBNReluPool))
	if err != nil {
		t.Fatal(err)
	}
	p, err := irsem.DecodePayload([]byte(strings.ReplaceAll(convBNReluPoolPayload, "\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Tensor[spec.Rat]{Shape: spec.Shape{1, 8, 8}, Data: make([]spec.Rat, 64)}
	for r := 0; r < 8; r++ {
		for c := 0; c < 8; c++ {
			x.Data[r*8+c] = spec.NewRat(1, 3)
			if c >= 4 {
				x.Data[r*8+c] = spec.NewRat(int64((r*7+c*3)%5-2), 3)
			}
		}
	}
	exact, _, err := irgrad.Grad[spec.Rat](g, p, x, irgrad.PathTape)
	if err != nil {
		t.Fatal(err)
	}
	ties := 0
	for _, v := range exact.Input.Data {
		if v.Big().Denom().Int64()%2 == 0 || v.Big().Denom().Int64()%4 == 0 {
			ties++
		}
	}
	if ties == 0 {
		t.Fatal("the exact gradient shows no split tie: the test's image does not exercise ties")
	}
	xi := spec.Convert(x, func(r spec.Rat) spec.Interval { return spec.Interval{}.FromRat(r.Big()) })
	for _, path := range irgrad.Paths() {
		gi, _, err := irgrad.Grad[spec.Interval](g, p, xi, path)
		if err != nil {
			t.Fatalf("%s: grad over intervals refuses: %v", path, err)
		}
		for k, v := range gi.Input.Data {
			if !v.Contains(exact.Input.Data[k].Big()) {
				t.Fatalf("%s: input gradient %d: %v does not contain the exact %s", path, k, v, exact.Input.Data[k])
			}
		}
		for i := range gi.Params {
			for k, v := range gi.Params[i].Data {
				if !v.Contains(exact.Params[i].Data[k].Big()) {
					t.Fatalf("%s: %s", path, fmt.Sprintf("param %d element %d: %v does not contain %s", i, k, v, exact.Params[i].Data[k]))
				}
			}
		}
	}
}
