package certificates

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/cli"
)

// ShardFlagUsage is the usage of certify's --shard flag: it documents the flag and the environment it reads.
const ShardFlagUsage = "I/N: certify only shard I of N (0 ≤ I < N) of the work units and write a shard directory for tlcheck merge; " +
	"unset, read from TEST_SHARD_INDEX or JOB_COMPLETION_INDEX with TEST_TOTAL_SHARDS (the flag wins)"

// Environment variables of the batch engines certify --shard follows:
// Bazel's test sharding protocol (TEST_SHARD_INDEX, TEST_TOTAL_SHARDS,
// TEST_SHARD_STATUS_FILE) and Kubernetes Indexed Jobs
// (JOB_COMPLETION_INDEX; the count is the Job's completions, which the pod
// does not see, so the Job sets TEST_TOTAL_SHARDS).
const (
	EnvShardIndex  = "TEST_SHARD_INDEX"
	EnvTotalShards = "TEST_TOTAL_SHARDS"
	EnvShardStatus = "TEST_SHARD_STATUS_FILE"
	EnvJobIndex    = "JOB_COMPLETION_INDEX"
)

// maxShardDigits bounds the spelling of a shard index or count (a count
// beyond 10^9 has no use and would only make messages long).
const maxShardDigits = 9

// ParseShard parses I/N (0 ≤ I < N) from source (a flag or variable name).
func ParseShard(source, v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	if !ok {
		return Shard{}, cli.Usagef("%s: %s is not I/N (shard I of N, 0 ≤ I < N)", source, cli.Quote(v))
	}
	idx, err1 := parseShardNumber(i)
	cnt, err2 := parseShardNumber(n)
	if err1 != nil || err2 != nil {
		return Shard{}, cli.Usagef("%s: %s is not I/N with decimal I and N (shard I of N, 0 ≤ I < N)", source, cli.Quote(v))
	}
	sh := Shard{Index: idx, Count: cnt}
	if err := sh.Check(); err != nil {
		return Shard{}, cli.Usagef("%s: %v", source, err)
	}
	return sh, nil
}

// parseShardNumber reads a non-negative decimal of at most maxShardDigits
// digits.
func parseShardNumber(s string) (int, error) {
	if s == "" || len(s) > maxShardDigits || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not a decimal")
	}
	return strconv.Atoi(s)
}

// SelectShard returns the shard certify runs: --shard when given; else from
// the environment, TEST_TOTAL_SHARDS with TEST_SHARD_INDEX (Bazel) or,
// failing it, JOB_COMPLETION_INDEX (Kubernetes); else unsharded. An index
// without a count (or a count without an index) is refused rather than
// guessed: N pods each certifying everything, or one shard merged as the
// whole, would silently be wrong.
func SelectShard(flagValue string, getenv func(string) string) (Shard, error) {
	if flagValue != "" {
		return ParseShard("--shard", flagValue)
	}
	total, idx := getenv(EnvTotalShards), getenv(EnvShardIndex)
	idxVar := EnvShardIndex
	if idx == "" {
		idx, idxVar = getenv(EnvJobIndex), EnvJobIndex
	}
	switch {
	case total == "" && idx == "":
		return Shard{}, nil
	case total == "":
		return Shard{}, cli.Usagef("certify: %s=%s is set but %s is not: set %s to the shard count, or pass --shard I/N (--shard 0/1 for one unsharded run)", idxVar, cli.Quote(idx), EnvTotalShards, EnvTotalShards)
	case idx == "":
		return Shard{}, cli.Usagef("certify: %s=%s is set but neither %s nor %s is: pass --shard I/N", EnvTotalShards, cli.Quote(total), EnvShardIndex, EnvJobIndex)
	}
	return ParseShard(idxVar+"/"+EnvTotalShards, idx+"/"+total)
}

// TouchShardStatus creates (or updates the time of) Bazel's
// TEST_SHARD_STATUS_FILE when a sharded certify starts, telling Bazel the tool
// understands its sharding protocol.
func TouchShardStatus(sh Shard, getenv func(string) string) error {
	path := getenv(EnvShardStatus)
	if path == "" || !sh.Sharded() {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return cli.BadInput(fmt.Errorf("%s: %v", EnvShardStatus, err))
	}
	if err := f.Close(); err != nil {
		return cli.BadInput(fmt.Errorf("%s: %v", EnvShardStatus, err))
	}
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		return cli.BadInput(fmt.Errorf("%s: %v", EnvShardStatus, err))
	}
	return nil
}
