package cuda

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ptxEntries parses the `.visible .entry NAME( .param .TYPE PNAME, ... )`
// declarations of a PTX text, independently of the launch table.
func ptxEntries(src string) (map[string][]string, []string) {
	out := map[string][]string{}
	var bad []string
	head := regexp.MustCompile(`(?s)\.visible\s+\.entry\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)`)
	param := regexp.MustCompile(`^\.param\s+\.(\w+)\s+([A-Za-z_][A-Za-z0-9_]*)$`)
	for _, m := range head.FindAllStringSubmatch(src, -1) {
		var ps []string
		for _, p := range strings.Split(m[2], ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			pm := param.FindStringSubmatch(p)
			if pm == nil {
				bad = append(bad, "entry "+m[1]+": cannot parse parameter "+p)
				continue
			}
			if pm[1] != "u64" {
				bad = append(bad, "entry "+m[1]+": parameter "+pm[2]+" is ."+pm[1]+"; launches pass 8 bytes per argument, so it must be .u64")
			}
			ps = append(ps, pm[2])
		}
		if _, dup := out[m[1]]; dup {
			bad = append(bad, "entry "+m[1]+" declared twice")
		}
		out[m[1]] = ps
	}
	return out, bad
}

// TestPTXEntriesMatchLaunchTable checks every embedded PTX file's entry
// names and parameter lists against what the Go side launches, and that
// each file declares .version ≤ 7.8 (ptxas 11.8) and a .target ptxas for
// sm_80 and sm_90 accepts.
func TestPTXEntriesMatchLaunchTable(t *testing.T) {
	files, err := fs.Glob(ptxFiles, "kernels/*.ptx")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded PTX: %v", err)
	}
	declared := map[string][]string{}
	inFile := map[string]string{}
	version := regexp.MustCompile(`(?m)^\.version\s+(\d+)\.(\d+)\s*$`)
	target := regexp.MustCompile(`(?m)^\.target\s+sm_(\d+)\s*$`)
	for _, f := range files {
		b, _ := ptxFiles.ReadFile(f)
		src := string(b)
		v := version.FindStringSubmatch(src)
		if v == nil || v[1] > "7" || (v[1] == "7" && len(v[2]) == 1 && v[2] > "8") {
			t.Errorf("%s: .version %v, want at most 7.8", f, v)
		}
		if tg := target.FindStringSubmatch(src); tg == nil || len(tg[1]) != 2 || tg[1] > "80" {
			t.Errorf("%s: .target %v, want sm_XX ≤ sm_80", f, tg)
		}
		if !strings.Contains(src, ".address_size 64") {
			t.Errorf("%s: no .address_size 64", f)
		}
		entries, bad := ptxEntries(src)
		for _, b := range bad {
			t.Errorf("%s: %s", f, b)
		}
		for name, ps := range entries {
			declared[name] = ps
			inFile[name] = strings.TrimPrefix(f, "kernels/")
		}
	}
	for _, k := range kernelSpecs {
		ps, ok := declared[k.Entry]
		if !ok {
			t.Errorf("launch table names %s, which no PTX file declares", k.Entry)
			continue
		}
		if inFile[k.Entry] != k.File {
			t.Errorf("%s: declared in %s, launch table says %s", k.Entry, inFile[k.Entry], k.File)
		}
		want := make([]string, len(k.Params))
		for i, p := range k.Params {
			want[i] = k.Entry + "_" + p
		}
		if !slices.Equal(ps, want) {
			t.Errorf("%s: PTX parameters %v, launch table %v", k.Entry, ps, want)
		}
		delete(declared, k.Entry)
	}
	for name := range declared {
		t.Errorf("PTX entry %s is never launched", name)
	}
}

// TestPTXParserCatchesMismatch shows the parser sees parameter lists, a
// 4-byte parameter and a duplicate entry (planted faults).
func TestPTXParserCatchesMismatch(t *testing.T) {
	cases := []struct {
		name, src string
		want      map[string][]string
		bad       int
	}{
		{"two params", ".visible .entry tl_x(\n\t.param .u64 tl_x_a,\n\t.param .u64 tl_x_b\n)\n{ ret; }", map[string][]string{"tl_x": {"tl_x_a", "tl_x_b"}}, 0},
		{"none", ".visible .entry tl_y()\n{ ret; }", map[string][]string{"tl_y": nil}, 0},
		{"u32 param", ".visible .entry tl_z(.param .u32 tl_z_n)\n{ ret; }", map[string][]string{"tl_z": {"tl_z_n"}}, 1},
		{"duplicate", ".visible .entry tl_d()\n{ ret; }\n.visible .entry tl_d()\n{ ret; }", map[string][]string{"tl_d": nil}, 1},
	}
	for _, c := range cases {
		got, bad := ptxEntries(c.src)
		if len(got) != len(c.want) || len(bad) != c.bad {
			t.Fatalf("%s: entries %v, problems %v", c.name, got, bad)
		}
		for k, v := range c.want {
			if !slices.Equal(got[k], v) {
				t.Errorf("%s: %s = %v, want %v", c.name, k, got[k], v)
			}
		}
	}
}
