package certificates

import (
	"strings"
	"testing"
)

// TestSelectShard: the shard comes from --shard, else from
// Bazel's TEST_SHARD_INDEX or Kubernetes' JOB_COMPLETION_INDEX with
// TEST_TOTAL_SHARDS; the flag wins; an index without a count, a count
// without an index and out-of-range or malformed values are usage errors.
func TestSelectShard(t *testing.T) {
	cases := []struct {
		flag      string
		env       map[string]string
		want      string // I/N, "" for unsharded
		errSubstr string
	}{
		{"", nil, "", ""},
		{"2/5", nil, "2/5", ""},
		{"0/1", map[string]string{EnvJobIndex: "3"}, "0/1", ""},
		{"1/2", map[string]string{EnvShardIndex: "0", EnvTotalShards: "4"}, "1/2", ""},
		{"", map[string]string{EnvShardIndex: "3", EnvTotalShards: "4"}, "3/4", ""},
		{"", map[string]string{EnvJobIndex: "6", EnvTotalShards: "7"}, "6/7", ""},
		{"", map[string]string{EnvShardIndex: "1", EnvJobIndex: "2", EnvTotalShards: "3"}, "1/3", ""},
		{"", map[string]string{EnvJobIndex: "2"}, "", "TEST_TOTAL_SHARDS is not"},
		{"", map[string]string{EnvShardIndex: "2"}, "", "TEST_TOTAL_SHARDS is not"},
		{"", map[string]string{EnvTotalShards: "2"}, "", "neither TEST_SHARD_INDEX nor JOB_COMPLETION_INDEX"},
		{"", map[string]string{EnvJobIndex: "7", EnvTotalShards: "7"}, "", "out of range"},
		{"3/3", nil, "", "out of range"},
		{"0/0", nil, "", "out of range"},
		{"-1/2", nil, "", "not I/N"},
		{"1", nil, "", "not I/N"},
		{"a/2", nil, "", "not I/N"},
		{"1/99999999999", nil, "", "not I/N"},
	}
	for _, c := range cases {
		got, err := SelectShard(c.flag, func(k string) string { return c.env[k] })
		switch {
		case c.errSubstr != "":
			if err == nil || !strings.Contains(err.Error(), c.errSubstr) {
				t.Errorf("flag %q env %v: error %v, want one containing %q", c.flag, c.env, err, c.errSubstr)
			}
		case err != nil:
			t.Errorf("flag %q env %v: %v", c.flag, c.env, err)
		case c.want == "" && got.Sharded(), c.want != "" && got.String() != c.want:
			t.Errorf("flag %q env %v: shard %v, want %q", c.flag, c.env, got, c.want)
		}
	}
}
